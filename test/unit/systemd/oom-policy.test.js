// @ts-check
'use strict';
// Issue 11: sbctl run gives its scope OOMPolicy=continue, so a kernel OOM kill takes one process,
// not the session; a systemd whose scopes lack the property refuses it, and the session then
// starts without it rather than not at all. Judged by what the manager accepts, not its version
// (Debian 12's 252 accepts it). A fake user manager; the real ones: guest test 53 on both guests.
const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { systemdMajor, refusedOomPolicy, describeOomPolicy } = require('../../../dist/systemd/features.js');
const { runSession } = require('../../../dist/cli/run.js');

test("the major version of systemd's Version property (for people)", () => {
  assert.equal(systemdMajor('252.39-1~deb12u2'), 252);
  assert.equal(systemdMajor('257.9-1~deb13u1'), 257);
  assert.equal(systemdMajor('weird'), undefined);
});

test('doctor says what this systemd does after a kernel OOM kill', () => {
  assert.match(describeOomPolicy('252.39-1~deb12u2', 'stop'), /^systemd 252\.39-1~deb12u2: scopes take OOMPolicy= \(the default here: stop\); sbctl run sets continue/);
  assert.match(describeOomPolicy('250', undefined), /scopes have no OOMPolicy=, so a kernel OOM kill in a session makes systemd stop the whole scope/);
  assert.match(describeOomPolicy('250', undefined), /raise\.maxMargin below MemoryMax/);
});

test('a refusal about OOMPolicy is told from any other', () => {
  assert.equal(refusedOomPolicy(Object.assign(new Error('Cannot set property OOMPolicy, or unknown property.'), { type: 'org.freedesktop.DBus.Error.PropertyReadOnly' })), true);
  assert.equal(refusedOomPolicy(new Error('Unit oomp.scope already exists.')), false);
});

/** sbctl run against a fake manager; `refuse` makes it refuse OOMPolicy as an older systemd does. */
async function runWith(refuse) {
  const started = [];
  const manager = {
    getUnit: async () => undefined,
    startScope: async (s) => {
      started.push(s);
      if (refuse && 'oomPolicy' in s) throw new Error('Cannot set property OOMPolicy, or unknown property.');
    },
    close: () => {},
  };
  const runtime = fs.mkdtempSync(path.join(os.tmpdir(), 'sb-run-'));
  const code = await runSession({ name: 'oomp', slice: 'sessions.slice', memoryHigh: 64 * 2 ** 20, argv: ['true'] }, /** @type {any} */ (manager), { ...process.env, XDG_RUNTIME_DIR: runtime });
  assert.equal(code, 0, 'the session ran');
  return started;
}

test('sbctl run: OOMPolicy=continue on the scope', async () => {
  const started = await runWith(false);
  assert.equal(started.length, 1);
  assert.equal(started[0].oomPolicy, 'continue');
  assert.equal(started[0].memoryHigh, 64 * 2 ** 20);
});

test('sbctl run: a systemd that refuses OOMPolicy= on scopes still gets the session, without it', async () => {
  const started = await runWith(true);
  assert.equal(started.length, 2);
  assert.ok(!('oomPolicy' in started[1]), JSON.stringify(started[1]));
  assert.equal(started[1].name, 'oomp.scope');
});
