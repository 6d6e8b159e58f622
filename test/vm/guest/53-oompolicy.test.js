// @ts-check
'use strict';
// Issue 11: sbctl run sets OOMPolicy=continue on its scope where systemd accepts it (both lab
// guests do: Debian 12's 252.39 too, though upstream added it for scopes in 253), and sbctl doctor
// says what this systemd does, consistently with the scope it really got.
const test = require('node:test');
const assert = require('node:assert/strict');
const { labOnly, waitFor } = require('./helpers');
const { runSession, stopSessions, sbctl, systemctl } = require('./sbd-helpers');

const systemdMajor = Number(/systemd (\d+)/.exec(systemctl('--version').stdout)?.[1]);

test('sbctl run and doctor follow what this systemd does after a kernel OOM kill', labOnly, async (t) => {
  t.after(() => stopSessions('oomp53'));
  const s = runSession('oomp53', ['--memory-high', '256M'], ['sleep', '300']);
  await waitFor(() => systemctl('is-active', 'oomp53.scope').stdout.trim() === 'active', 60_000, { what: 'the session to start' });
  const policy = systemctl('show', '-p', 'OOMPolicy', '--value', 'oomp53.scope').stdout.trim();
  const doctor = sbctl('doctor');
  const line = doctor.stdout.split('\n').find((l) => /OOMPolicy/.test(l.slice(0, 30))) ?? '';
  t.diagnostic(`systemd ${systemdMajor}; scope OOMPolicy "${policy}"; doctor: ${line}`);
  assert.ok(systemdMajor >= 252, 'systemd version read');
  assert.equal(policy, 'continue', 'the scope got OOMPolicy=continue');
  assert.match(line, /scopes take OOMPolicy= \(the default here: \w+\); sbctl run sets continue/, 'doctor says what this systemd does');
  assert.equal(s.child.exitCode, null, 'the session runs: the start did not fail');
});
