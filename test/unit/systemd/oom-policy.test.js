// @ts-check
'use strict';
// Issue 11: where systemd supports it (≥ 253), sbctl run gives its scope OOMPolicy=continue, so a
// kernel OOM kill takes one process, not the session; on 252 it must not (the property would be
// refused and the session never start). A fake user manager; the real one: guest test 53.
const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { systemdMajor, scopeOomPolicySupported, describeOomPolicy, SCOPE_OOM_POLICY_SINCE } = require('../../../dist/systemd/features.js');
const { runSession } = require('../../../dist/cli/run.js');

test('the version gate: the major version of systemd\'s Version property', () => {
  assert.equal(systemdMajor('252.39-1~deb12u2'), 252);
  assert.equal(systemdMajor('257.9-1~deb13u1'), 257);
  assert.equal(systemdMajor('253'), 253);
  assert.equal(systemdMajor('weird'), undefined);
  assert.equal(SCOPE_OOM_POLICY_SINCE, 253);
  assert.equal(scopeOomPolicySupported('252.39-1~deb12u2'), false);
  assert.equal(scopeOomPolicySupported('253.1'), true);
  assert.equal(scopeOomPolicySupported('257.9-1~deb13u1'), true);
  assert.equal(scopeOomPolicySupported(''), false, 'unknown: not set (a refused property would fail the start)');
});

test('doctor says what this systemd does after a kernel OOM kill', () => {
  assert.match(describeOomPolicy('252.39-1~deb12u2'), /^systemd 252\.39-1~deb12u2: OOMPolicy= on scopes needs 253, so a kernel OOM kill in a session makes systemd stop the whole scope/);
  assert.match(describeOomPolicy('252.39-1~deb12u2'), /raise\.maxMargin below MemoryMax/);
  assert.match(describeOomPolicy('257.9-1~deb13u1'), /sbctl run sets OOMPolicy=continue on its scopes, so a kernel OOM kill takes one process, not the session/);
});

/** sbctl run against a fake manager of this version; resolves with what startScope was given. */
async function runWith(version) {
  const started = [];
  const manager = {
    getUnit: async () => undefined,
    managerVersion: async () => version,
    startScope: async (s) => { started.push(s); },
    close: () => {},
  };
  const runtime = fs.mkdtempSync(path.join(os.tmpdir(), 'sb-run-'));
  const code = await runSession({ name: 'oomp', slice: 'sessions.slice', memoryHigh: 64 * 2 ** 20, argv: ['true'] }, /** @type {any} */ (manager), { ...process.env, XDG_RUNTIME_DIR: runtime });
  assert.equal(code, 0);
  assert.equal(started.length, 1);
  return started[0];
}

test('sbctl run: OOMPolicy=continue on systemd ≥ 253', async () => {
  const scope = await runWith('257.9-1~deb13u1');
  assert.equal(scope.oomPolicy, 'continue');
  assert.equal(scope.memoryHigh, 64 * 2 ** 20);
});

test('sbctl run: no OOMPolicy on systemd 252', async () => {
  const scope = await runWith('252.39-1~deb12u2');
  assert.ok(!('oomPolicy' in scope), JSON.stringify(scope));
  assert.equal(scope.name, 'oomp.scope');
});
