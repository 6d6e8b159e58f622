// @ts-check
'use strict';
const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { loadState, saveState, defaultStatePath } = require('../../../dist/daemon/state-file.js');

test('state survives a save and a load, Infinity, the boot id, a stop under way and open freeze signals included', () => {
  const file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'sb-state-')), 'sub', 'state.json');
  const state = {
    'a.scope': { invocationId: 'ab', bootId: 'fe2083f2-0c4e-4c5b-9a57-1d2f3e4a5b6c', deadline: { startedAtMs: 1, endsAtMs: 2, currentAtStart: 3 }, originalHigh: Infinity },
    'b.scope': { invocationId: 'cd', bootId: 'fe2083f2-0c4e-4c5b-9a57-1d2f3e4a5b6c', stopping: true, stop: { name: 'cc1', processes: [{ pid: 41, startTicks: 900, uid: 1000 }], killDueAtMs: 123456.5, brakeBytes: 64 * 2 ** 20 } },
    'c.scope': { invocationId: 'ef', bootId: 'fe2083f2-0c4e-4c5b-9a57-1d2f3e4a5b6c', freeze: { open: ['silent', 'pegged'], busySinceMs: 99.5 } },
  };
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

test('entries are checked one by one: a bad one is set aside with a warning naming the file and the entry, the good ones are kept', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sb-state-'));
  const file = path.join(dir, 'state.json');
  const good = { invocationId: 'ab', deadline: { startedAtMs: 1, endsAtMs: 2, currentAtStart: 3 }, originalHigh: 'infinity' };
  const stopping = { invocationId: 'cd', stop: { name: 'cc1plus', processes: [{ pid: 41, startTicks: 9, uid: 1000 }], killDueAtMs: 5, brakeBytes: 67108864 } };
  const bad = {
    'no-id.scope': { deadline: { startedAtMs: 1, endsAtMs: 2, currentAtStart: 3 } },
    'odd-deadline.scope': { invocationId: 'ef', deadline: { startedAtMs: 'soon' } },
    'odd-stop.scope': { invocationId: 'ef', stop: { name: 'x', processes: [{ pid: -1 }], killDueAtMs: 5, brakeBytes: 1 } },
    'not-an-object.scope': 7,
  };
  // a freeze part it cannot read is dropped alone: the deadline beside it is kept
  const oddFreeze = { invocationId: 'gh', deadline: { startedAtMs: 1, endsAtMs: 2, currentAtStart: 3 }, freeze: { open: ['asleep'] } };
  fs.writeFileSync(file, JSON.stringify({ 'a.scope': good, 'b.scope': stopping, ...bad, 'odd-freeze.scope': oddFreeze }));
  const said = [];
  const state = loadState(file, (why) => said.push(why));
  assert.deepEqual(state, { 'a.scope': { ...good, originalHigh: Infinity }, 'b.scope': stopping, 'odd-freeze.scope': { invocationId: 'gh', deadline: oddFreeze.deadline } });
  assert.equal(said.length, 5, said.join('\n'));
  assert.match(said.find((s) => s.includes('odd-freeze')) ?? '', /its freeze signals are dropped \(freeze\.open\.0: .+\); the rest of it is kept/);
  for (const unit of Object.keys(bad)) {
    const line = said.find((s) => s.includes(`"${unit}"`));
    assert.ok(line, `a warning names ${unit}: ${said.join('\n')}`);
    assert.ok(line.includes(file), `the warning names the file: ${line}`);
  }
  assert.match(said.find((s) => s.includes('odd-deadline')) ?? '', /deadline\.startedAtMs/, 'and says what is wrong in it');
  assert.deepEqual(JSON.parse(fs.readFileSync(`${file}.bad`, 'utf8')), { ...bad, 'odd-freeze.scope': { freeze: oddFreeze.freeze } }, 'the bad entries and parts are kept aside, not lost');
});

test('a save reaches the disk: the temporary file is fsynced before the rename, the directory after it', (t) => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sb-state-'));
  const file = path.join(dir, 'state.json');
  saveState(file, {}); // the directory exists from now on
  const calls = [];
  const where = (fd) => fs.readlinkSync(`/proc/self/fd/${fd}`);
  t.mock.method(fs, 'fsyncSync', function (fd) { calls.push(['fsync', where(fd)]); });
  const rename = fs.renameSync;
  t.mock.method(fs, 'renameSync', function (from, to) { calls.push(['rename', String(to)]); return rename(from, to); });
  saveState(file, { 'a.scope': { invocationId: 'ab' } });
  assert.equal(calls.length, 3, JSON.stringify(calls));
  assert.equal(calls[0][0], 'fsync');
  assert.match(calls[0][1], /state\.json\.\d+\.tmp$/, 'the temporary file first');
  assert.deepEqual(calls[1], ['rename', file]);
  assert.deepEqual(calls[2], ['fsync', dir], 'then the directory that holds the new name');
  assert.deepEqual(loadState(file, () => assert.fail('no complaint expected')), { 'a.scope': { invocationId: 'ab' } });
});
