// @ts-check
'use strict';
// Issue 13: the wait after failed tries (exponential, with ±20 % jitter, capped) and the
// suspension after maxConsecutiveFailures in a row, told once; a success resets both.
const test = require('node:test');
const assert = require('node:assert/strict');
const { afterTick, backoffS, noFailures, MAX_BACKOFF_S } = require('../../../dist/monitor/backoff.js');

test('the schedule: the interval while it succeeds, then twice as long after each failure in a row, capped', () => {
  assert.equal(backoffS(5, 0, 0.5), 5);
  assert.deepEqual([1, 2, 3, 4].map((n) => backoffS(5, n, 0.5)), [10, 20, 40, 80]);
  assert.equal(backoffS(60, 10, 0.5), MAX_BACKOFF_S, 'never more than 30 min');
});

test('the jitter: ±20 % around the nominal wait, from the draw', () => {
  assert.equal(backoffS(5, 1, 0), 8);
  assert.ok(Math.abs(backoffS(5, 1, 0.999999) - 12) < 1e-4);
  for (let i = 0; i < 100; i++) {
    const w = backoffS(5, 2, Math.random());
    assert.ok(w >= 16 && w < 24, String(w));
  }
});

test('suspended after maxConsecutiveFailures in a row, suspendNow once; a success resets the count', () => {
  let s = noFailures();
  const steps = [];
  for (let i = 0; i < 4; i++) {
    const o = afterTick(s, false, 3);
    steps.push([o.state.consecutive, o.state.suspended, o.suspendNow]);
    s = o.state;
  }
  assert.deepEqual(steps, [[1, false, false], [2, false, false], [3, true, true], [4, true, false]]);
  assert.deepEqual(afterTick({ consecutive: 2, suspended: false }, true, 3), { state: noFailures(), suspendNow: false });
  assert.equal(afterTick(noFailures(), false, 1).suspendNow, true, 'maxConsecutiveFailures 1: the first failure suspends');
});
