// @ts-check
'use strict';
const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { loadState, saveState, defaultStatePath } = require('../../../dist/daemon/state-file.js');

test('state survives a save and a load, Infinity included', () => {
  const file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'sb-state-')), 'sub', 'state.json');
  const state = { 'a.scope': { invocationId: 'ab', deadline: { startedAtMs: 1, endsAtMs: 2, currentAtStart: 3 }, originalHigh: Infinity } };
  saveState(file, state);
  assert.deepEqual(loadState(file, () => assert.fail('no complaint expected')), state);
  assert.equal(fs.statSync(file).mode & 0o777, 0o600);
});

test('a missing file is an empty state; a corrupt one is said, kept aside, and replaced by an empty state', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sb-state-'));
  const file = path.join(dir, 'state.json');
  assert.deepEqual(loadState(file, () => assert.fail('missing is fine')), {});
  fs.writeFileSync(file, '{"a.scope": ');
  const said = [];
  assert.deepEqual(loadState(file, (why) => said.push(why)), {});
  assert.match(said[0], /not valid JSON/);
  assert.ok(fs.existsSync(`${file}.bad`), 'nothing lost: the bad file is kept');
  assert.equal(defaultStatePath({ XDG_STATE_HOME: '/s' }), '/s/sessionbrake/state.json');
});
