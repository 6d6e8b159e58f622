// @ts-check
'use strict';
// When the textfile is written (src/metrics/schedule.ts), on timers the test steps by hand: a
// storm of changes costs one write a second at most, idle costs the one sbd-wide minute timer,
// writes never overlap.
const test = require('node:test');
const assert = require('node:assert/strict');
const { WriteSchedule, CHANGE_DEBOUNCE_MS, REWRITE_EVERY_MS } = require('../../../dist/metrics/schedule.js');

/** Timers on a clock the test moves; counts what is armed. */
function fakeTimers() {
  let now = 0;
  let seq = 0;
  const armed = new Map();
  const make = (f, ms, every) => {
    const t = { id: ++seq, f, ms, at: now + ms, every, unref: () => t };
    armed.set(t.id, t);
    return t;
  };
  return {
    armed,
    timers: {
      setTimeout: (f, ms) => make(f, ms, false),
      setInterval: (f, ms) => make(f, ms, true),
      clearTimeout: (t) => armed.delete(t.id),
      clearInterval: (t) => armed.delete(t.id),
    },
    /** Move the clock by ms, firing what falls due in order; returns how many fired. */
    async advance(ms) {
      const end = now + ms;
      let fired = 0;
      for (;;) {
        const next = [...armed.values()].sort((a, b) => a.at - b.at)[0];
        if (!next || next.at > end) break;
        now = next.at;
        if (next.every) next.at += next.ms;
        else armed.delete(next.id);
        fired++;
        next.f();
        await new Promise((r) => setImmediate(r)); // let the write's promise settle
      }
      now = end;
      return fired;
    },
  };
}

test('the constants: a change written within a second, a rewrite once a minute', () => {
  assert.equal(CHANGE_DEBOUNCE_MS, 1000);
  assert.equal(REWRITE_EVERY_MS, 60_000);
});

test('written at start; idle, only the one minute timer is armed, and it writes once a minute', async () => {
  const clock = fakeTimers();
  let writes = 0;
  const s = new WriteSchedule(async () => { writes++; }, clock.timers);
  s.start();
  await new Promise((r) => setImmediate(r));
  assert.equal(writes, 1, 'written at start');
  assert.equal(clock.armed.size, 1, 'one timer: the minute rewrite');
  const fired = await clock.advance(10 * 60_000);
  assert.equal(fired, 10, 'ten wakeups in ten idle minutes');
  assert.equal(writes, 11);
  s.close();
  assert.equal(clock.armed.size, 0, 'closed: nothing armed');
});

test('a storm of changes: one timer while they are pending, one write a second at most', async () => {
  const clock = fakeTimers();
  let writes = 0;
  const s = new WriteSchedule(async () => { writes++; }, clock.timers);
  s.start();
  await new Promise((r) => setImmediate(r));
  for (let i = 0; i < 1000; i++) s.changed();
  assert.equal(clock.armed.size, 2, 'the minute timer and one pending change');
  await clock.advance(CHANGE_DEBOUNCE_MS);
  assert.equal(writes, 2, 'a thousand changes, one write');
  assert.equal(clock.armed.size, 1, 'nothing pending: the change timer is gone');
  // changes every 100 ms for 10 s: at most one write per second
  for (let i = 0; i < 100; i++) {
    s.changed();
    await clock.advance(100);
  }
  assert.ok(writes - 2 <= 10, `${writes - 2} writes in 10 s of changes`);
  assert.ok(writes - 2 >= 9, `and they were written (${writes - 2})`);
  s.close();
});

test('writes never overlap: a change during a write is written after it', async () => {
  const clock = fakeTimers();
  let running = 0;
  let most = 0;
  let writes = 0;
  let release = () => {};
  const s = new WriteSchedule(() => {
    running++;
    most = Math.max(most, running);
    writes++;
    return new Promise((resolve) => { release = () => { running--; resolve(); }; });
  }, clock.timers);
  s.start(); // write 1 in flight
  s.changed();
  await clock.advance(CHANGE_DEBOUNCE_MS); // due while write 1 runs: held back
  assert.equal(writes, 1);
  release();
  await new Promise((r) => setImmediate(r));
  await clock.advance(CHANGE_DEBOUNCE_MS); // written after
  assert.equal(writes, 2);
  release();
  assert.equal(most, 1, 'never two at once');
  s.close();
});

test('a failing write does not stop the schedule', async () => {
  const clock = fakeTimers();
  let tries = 0;
  const s = new WriteSchedule(async () => { tries++; throw new Error('EACCES'); }, clock.timers);
  s.start();
  await clock.advance(REWRITE_EVERY_MS * 2);
  assert.equal(tries, 3);
  s.close();
});
