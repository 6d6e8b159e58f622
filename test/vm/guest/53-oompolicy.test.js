// @ts-check
'use strict';
// Issue 11: sbctl run sets OOMPolicy=continue on its scope where systemd supports it (≥ 253) and
// must not on 252 (where it would be refused); sbctl doctor says which, on this guest's systemd.
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
  if (systemdMajor >= 253) {
    assert.equal(policy, 'continue');
    assert.match(line, /sbctl run sets OOMPolicy=continue on its scopes/);
  } else {
    assert.notEqual(policy, 'continue', 'not set on 252');
    assert.match(line, /OOMPolicy= on scopes needs 253, so a kernel OOM kill in a session makes systemd stop the whole scope/);
  }
  assert.equal(s.child.exitCode, null, 'the session runs: the start did not fail');
});
