// @ts-check
'use strict';
// The state file's writes coalesced: deadlines share a write within COALESCE_MS, the record of an
// action is written at once, and stop() writes what is pending.
const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { StateWriter, mustWriteNow, COALESCE_MS } = require('../../../dist/daemon/state-writer.js');
const { loadState, saveState } = require('../../../dist/daemon/state-file.js');

const boot = 'fe2083f2-0c4e-4c5b-9a57-1d2f3e4a5b6c';
const withDeadline = (i) => ({ invocationId: `inv${i}`, bootId: boot, deadline: { startedAtMs: 1000 + i, endsAtMs: 61000 + i, currentAtStart: 32 * 2 ** 20 } });

/** A writer over a real file, with a timer the test fires. */
function writerOn(file, state = {}) {
  const timers = [];
  const writer = new StateWriter(state, {
    write: (s) => saveState(file, s),
    onError: (err) => assert.fail(String(err)),
    setTimer: (fn, ms) => { const t = { fn, ms, cleared: false }; timers.push(t); return t; },
    clearTimer: (t) => { t.cleared = true; },
  });
  const fire = () => { for (const t of timers.splice(0)) if (!t.cleared) t.fn(); };
  return { writer, timers, fire };
}

const tmpFile = () => path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'sb-writer-')), 'state.json');
const onDisk = (file) => loadState(file, () => assert.fail('no complaint expected'));

test('a storm of deadlines is one write after COALESCE_MS, with every deadline in it', () => {
  const file = tmpFile();
  const { writer, timers, fire } = writerOn(file);
  for (let i = 0; i < 200; i++) writer.save(`s${i}.scope`, withDeadline(i));
  assert.equal(writer.writes, 0, 'nothing written yet: they wait to share a write');
  assert.equal(fs.existsSync(file), false);
  assert.equal(timers.length, 1, 'one timer for the file, not one per session');
  assert.equal(timers[0].ms, COALESCE_MS);
  fire();
  assert.equal(writer.writes, 1);
  const saved = onDisk(file);
  assert.equal(Object.keys(saved).length, 200);
  assert.deepEqual(saved['s7.scope'], withDeadline(7));
  fire();
  assert.equal(writer.writes, 1, 'nothing pending: no second write');
});

test("an action's record (a stop under way, a raised brake) is written at once, with the deadlines pending", () => {
  const file = tmpFile();
  const { writer } = writerOn(file);
  writer.save('a.scope', withDeadline(1));
  writer.save('b.scope', { ...withDeadline(2), stopping: true });
  assert.equal(writer.writes, 1, 'the stop is on disk before it goes on');
  assert.deepEqual(Object.keys(onDisk(file)).sort(), ['a.scope', 'b.scope'], "and a's deadline with it");
  writer.save('b.scope', { ...withDeadline(2), stopping: true, stop: { name: 'python3', processes: [{ pid: 41, startTicks: 9, uid: 1000 }], killDueAtMs: 5, brakeBytes: 1 } });
  assert.equal(writer.writes, 2, 'the processes signalled: at once');
  writer.save('c.scope', { ...withDeadline(3), originalHigh: 64 * 2 ** 20 });
  assert.equal(writer.writes, 3, 'the brake before a raise: at once');
});

test('stop() writes what is pending (an orderly exit, as on systemctl restart, loses no deadline)', () => {
  const file = tmpFile();
  const { writer } = writerOn(file);
  writer.save('a.scope', withDeadline(1));
  writer.stop();
  assert.deepEqual(onDisk(file)['a.scope'], withDeadline(1));
});

test('a save that changes nothing writes nothing; a dropped record is written away', () => {
  const file = tmpFile();
  saveState(file, { 'a.scope': withDeadline(1) });
  const { writer, timers, fire } = writerOn(file, onDisk(file));
  writer.save('a.scope', withDeadline(1));
  writer.save('gone.scope', undefined);
  assert.equal(timers.length, 0, 'the same record as loaded: nothing to write');
  writer.save('a.scope', undefined); // the deadline ended
  fire();
  assert.deepEqual(onDisk(file), {});
});

test('mustWriteNow: a deadline alone may wait; what records an action may not', () => {
  const d = withDeadline(1);
  assert.equal(mustWriteNow(undefined, d), false, 'a deadline begins');
  assert.equal(mustWriteNow(d, undefined), false, 'a deadline ends');
  assert.equal(mustWriteNow(d, { ...d, deadline: { ...d.deadline, endsAtMs: 9 } }), false, 'a deadline moves');
  assert.equal(mustWriteNow(d, { ...d, stopping: true }), true);
  assert.equal(mustWriteNow({ ...d, stopping: true }, { ...d }), true, 'a stop is over');
  assert.equal(mustWriteNow(undefined, { invocationId: 'x', originalHigh: 5 }), true);
  assert.equal(mustWriteNow({ invocationId: 'x', originalHigh: 5 }, { invocationId: 'x', originalHigh: 5, deadline: d.deadline }), false, 'a deadline beside an unchanged brake');
  const told = { invocationId: 'x', freeze: { open: ['missing'] } };
  assert.equal(mustWriteNow(undefined, told), true, 'a freeze signal told: written before it is told');
  assert.equal(mustWriteNow(told, undefined), true, 'recovered');
  assert.equal(mustWriteNow(told, { ...told, freeze: { open: ['missing', 'pegged'], busySinceMs: 1 } }), true, 'another signal joins');
  assert.equal(mustWriteNow(told, { ...told, deadline: d.deadline }), false, 'a deadline beside unchanged signals');
});

test('a batched save is written by the next flush, not at once', () => {
  const writes = [];
  const w = new StateWriter({}, { write: (state) => writes.push(JSON.parse(JSON.stringify(state))), onError: (err) => assert.fail(err), setTimer: () => ({}), clearTimer: () => {} });
  w.save('a.scope', { invocationId: 'x', freeze: { open: ['missing'] } }, { batched: true });
  assert.equal(writes.length, 0, 'batched: waits for the flush');
  w.flush();
  assert.deepEqual(writes, [{ 'a.scope': { invocationId: 'x', freeze: { open: ['missing'] } } }]);
  w.save('b.scope', { invocationId: 'y', freeze: { open: ['silent'] } });
  assert.equal(writes.length, 2, 'not batched: at once');
});
