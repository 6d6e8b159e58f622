// @ts-check
'use strict';
// sbd's own crash-loop fuse (monitor/crash-count.ts): the crashes systemd restarted, counted from
// the unit's NRestarts on the monotonic clock of one boot.
const test = require('node:test');
const assert = require('node:assert/strict');
const { countCrashes, SLOW_CRASH_LOOP } = require('../../../dist/monitor/crash-count.js');
const { CRASH_LOOP_BURST } = require('../../../dist/monitor/unit.js');

const BOOT = 'b'.repeat(32);
const MIN = 60_000;

/** The count after each reading [nRestarts, atMs] in turn; the blown flag of each. */
function run(readings, boot = BOOT) {
  let c;
  const blown = [];
  for (const [n, at] of readings) {
    const r = countCrashes(c, n, at, boot);
    if (r === undefined) { blown.push(null); continue; }
    c = r.next;
    blown.push(r.blown);
  }
  return { c, blown };
}

test('four crashes restarted within 30 minutes blow the fuse, one more than systemd\'s burst', () => {
  assert.deepEqual(SLOW_CRASH_LOOP, { crashes: 4, withinMs: 30 * MIN });
  assert.equal(SLOW_CRASH_LOOP.crashes, CRASH_LOOP_BURST + 1, 'a fast loop is systemd\'s to catch first');
  assert.deepEqual(run([[1, 0], [2, 7 * MIN], [3, 14 * MIN], [4, 21 * MIN]]).blown, [false, false, false, true]);
});

test('crashes spread wider than 30 minutes do not', () => {
  const { blown, c } = run([[1, 0], [2, 11 * MIN], [3, 22 * MIN], [4, 33 * MIN], [5, 44 * MIN]]);
  assert.deepEqual(blown, [false, false, false, false, false]);
  assert.deepEqual(c?.atMonoMs, [22 * MIN, 33 * MIN, 44 * MIN]);
});

test('a reading with nothing new restarted changes nothing (a unit\'s several PropertiesChanged)', () => {
  assert.deepEqual(run([[1, 0], [1, 1000], [1, 2000], [2, 3000]]).blown, [false, null, null, false]);
  assert.equal(countCrashes(undefined, 0, 0, BOOT), undefined);
  assert.equal(countCrashes(undefined, undefined, 0, BOOT), undefined);
});

test('restarts made while sbd was away count as seen at its return', () => {
  const r = countCrashes({ restartsSeen: 1, bootId: BOOT, atMonoMs: [0] }, 4, 5 * MIN, BOOT);
  assert.deepEqual(r, { next: { restartsSeen: 4, bootId: BOOT, atMonoMs: [0, 5 * MIN, 5 * MIN, 5 * MIN] }, blown: true });
});

test('a new unit of the same name (NRestarts went down) counts from its own restarts, the old times dropped', () => {
  const r = countCrashes({ restartsSeen: 2, bootId: BOOT, atMonoMs: [0, MIN] }, 1, 2 * MIN, BOOT);
  assert.deepEqual(r, { next: { restartsSeen: 1, bootId: BOOT, atMonoMs: [2 * MIN] }, blown: false });
});

test('a count of another boot is void: its monotonic times mean nothing here', () => {
  const r = countCrashes({ restartsSeen: 2, bootId: 'a'.repeat(32), atMonoMs: [0, MIN] }, 1, 2 * MIN, BOOT);
  assert.deepEqual(r, { next: { restartsSeen: 1, bootId: BOOT, atMonoMs: [2 * MIN] }, blown: false });
});
