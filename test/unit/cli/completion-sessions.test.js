// @ts-check
'use strict';
// Issue 14: the completion offers session names (for --session and `status`), asked of sbd's
// ListSessions as you complete; quietly nothing without sbd.
const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { spawnSync } = require('node:child_process');
const { FakeBroker } = require('../../support/fake-bus');
const { exportService } = require('../../../dist/daemon/bus-service.js');
const { completeSessions, bashCompletion } = require('../../../dist/cli/completion.js');
const { buildProgram } = require('../../../dist/cli/program.js');

const row = (name) => ({
  name, unit: `sb-${name}.scope`, state: 'ok', deadlineS: null, lastAction: null, feed: 'psi',
  currentBytes: 1, highBytes: 2, maxBytes: Infinity, swapMaxBytes: 0, anonShare: 0.5,
  pressureFullAvg10: 0, processes: 1, biggest: null, heartbeatAgeS: null,
});

test('complete-sessions: the names sbd watches, one per line; nothing without sbd or a bus', async (t) => {
  const broker = new FakeBroker();
  const sbd = await broker.connect();
  await exportService(sbd, { health: () => ({}), sessions: () => [row('fix-login'), row('refactor')], slices: () => undefined });
  t.after(() => sbd.disconnect());
  const names = async (connect) => {
    const got = [];
    assert.equal(await completeSessions(connect, (l) => got.push(l)), 0);
    return got;
  };
  assert.deepEqual(await names(() => broker.connect()), ['fix-login', 'refactor']);
  const lonely = new FakeBroker(); // no sbd on this bus
  assert.deepEqual(await names(() => lonely.connect()), []);
  assert.deepEqual(await names(async () => { throw new Error('no bus'); }), []);
});

test('the bash script completes session names after --session and as status\'s argument', () => {
  const script = bashCompletion(buildProgram(() => {}));
  assert.equal(spawnSync('bash', ['-n'], { input: script, encoding: 'utf8' }).status, 0);
  assert.doesNotMatch(script, /complete-sessions\) opts/, 'the hidden helper is not offered');
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sb-compl-s-'));
  const fake = path.join(dir, 'sbctl');
  fs.writeFileSync(fake, '#!/bin/sh\n[ "$1" = complete-sessions ] && printf "fix-login\\nrefactor\\n"\n', { mode: 0o755 });
  const drive = (line) => spawnSync('bash', ['-c', `${script}\nCOMP_WORDS=(${line}); COMP_CWORD=$((\${#COMP_WORDS[@]} - 1)); _sbctl; printf '%s\\n' "\${COMPREPLY[@]}"`], { encoding: 'utf8' }).stdout.trim();
  assert.equal(drive(`${fake} status ''`), 'fix-login\nrefactor');
  assert.equal(drive(`${fake} status re`), 'refactor');
  assert.equal(drive(`${fake} inbox --session f`), 'fix-login');
  assert.equal(drive(`${fake} monitor list --session ''`), 'fix-login\nrefactor');
  assert.equal(drive(`${fake} status fix-login ''`), '', 'status takes one session');
  fs.rmSync(dir, { recursive: true, force: true });
});
