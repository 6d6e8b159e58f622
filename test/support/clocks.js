// @ts-check
'use strict';
// A wall clock that a test can step, beside a steady monotonic clock, for the whole process:
// Date.now() and process.hrtime.bigint() (what sbd's src/util/clock.ts reads) are mocked for the
// test `t` and put back after it. advance(ms) moves true time (both clocks); stepWall(ms) moves
// the wall clock alone, as `date -s` or NTP would.

/** @param {import('node:test').TestContext} t */
function fakeClocks(t, { wallAtStart = Date.UTC(2026, 10, 30, 3, 0, 0), monoAtStart = 5_000_000 } = {}) {
  let trueMs = 0;
  let wallStepMs = 0;
  t.mock.method(Date, 'now', () => wallAtStart + trueMs + wallStepMs);
  t.mock.method(process.hrtime, 'bigint', () => BigInt(Math.round((monoAtStart + trueMs) * 1e6)));
  return {
    advance: (/** @type {number} */ ms) => { trueMs += ms; },
    stepWall: (/** @type {number} */ ms) => { wallStepMs += ms; },
    /** ms of true time since the fake clocks began */
    get trueMs() { return trueMs; },
    /** the monotonic clock now (ms), as src/util/clock.ts reads it */
    monoMs: () => monoAtStart + trueMs,
  };
}

module.exports = { fakeClocks };
