// @ts-check
'use strict';
// The awake feeds' windows taken in slices, with the loop's I/O polled between them
// (stall/sample-queue.ts): each feed's sample once however often it came due, in the order due,
// no slice longer than its length, and the kernel's news not held behind every window due.
const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const { SampleQueue, SAMPLE_SLICE_MS } = require('../../../dist/stall/sample-queue.js');

/** A queue on a clock the test moves, whose next slice runs when the test says. */
function manualQueue(sliceMs = 20) {
  const clock = { t: 0 };
  /** @type {Array<() => void>} */
  const deferred = [];
  const queue = new SampleQueue({ sliceMs, now: () => clock.t, defer: (next) => deferred.push(next) });
  const runSlice = () => {
    const next = deferred.shift();
    assert.ok(next, 'a slice was deferred');
    next();
  };
  return { clock, deferred, queue, runSlice };
}

test('a feed queued twice before its slice is sampled once, and the samples run in the order they came due', () => {
  const { deferred, queue, runSlice } = manualQueue();
  const ran = [];
  const a = () => ran.push('a');
  const b = () => ran.push('b');
  queue.push(a);
  queue.push(b);
  queue.push(a);
  assert.equal(queue.size, 2);
  assert.equal(deferred.length, 1, 'one slice deferred for all three pushes');
  assert.deepEqual(ran, [], 'nothing taken in the timer callback itself');
  runSlice();
  assert.deepEqual(ran, ['a', 'b']);
  assert.equal(queue.size, 0);
  assert.equal(deferred.length, 0, 'nothing left: no slice deferred');
});

test('a slice ends once its length went by and the rest waits for the next one, after the loop polled', () => {
  const { clock, deferred, queue, runSlice } = manualQueue(20);
  const ran = [];
  for (let i = 0; i < 5; i++) queue.push(() => { ran.push(i); clock.t += 10; });
  runSlice();
  assert.deepEqual(ran, [0, 1], '10 ms each: two in a slice of 20 ms');
  assert.equal(deferred.length, 1, 'the rest deferred');
  runSlice();
  assert.deepEqual(ran, [0, 1, 2, 3]);
  runSlice();
  assert.deepEqual(ran, [0, 1, 2, 3, 4]);
  assert.equal(deferred.length, 0);
});

test('a sample taken out of the queue (its feed asleep or stopped) does not run', () => {
  const { queue, runSlice } = manualQueue();
  const ran = [];
  const a = () => ran.push('a');
  const b = () => ran.push('b');
  queue.push(a);
  queue.push(b);
  assert.equal(queue.delete(a), true);
  assert.equal(queue.delete(a), false, 'not queued any more');
  runSlice();
  assert.deepEqual(ran, ['b']);
});

test("a sample that throws leaves the others queued for the next slice; the error is the caller's", () => {
  const { deferred, queue, runSlice } = manualQueue();
  const ran = [];
  queue.push(() => { throw new Error('a fault of sbd'); });
  queue.push(() => ran.push('b'));
  assert.throws(runSlice, /a fault of sbd/);
  assert.equal(deferred.length, 1, 'the rest rescheduled');
  runSlice();
  assert.deepEqual(ran, ['b']);
});

/** Busy for `ms` on the real clock: a sample's CPU. */
function busy(ms) {
  const until = performance.now() + ms;
  while (performance.now() < until);
}

test('on the real event loop an I/O callback runs between slices, where 100 due timers held it until the last', async () => {
  const SAMPLES = 100;
  const SAMPLE_MS = 2; // 200 ms of samples due at once, ten slices of SAMPLE_SLICE_MS
  /** Runs the samples as `start` queues them; resolves with how many had run when fs.stat's callback came. */
  const race = (start) => new Promise((resolve) => {
    let taken = 0;
    let atIo;
    const take = () => {
      taken++;
      busy(SAMPLE_MS);
      if (taken === SAMPLES) setImmediate(() => resolve(atIo));
    };
    fs.stat(__filename, () => { atIo = taken; });
    start(take);
  });
  // Each sample straight from its own timer, all due at once: Node runs every expired timer of a
  // timers phase before it polls, so the stat's answer waits for all of them.
  const straight = await race((take) => {
    for (let i = 0; i < SAMPLES; i++) setTimeout(take, 5);
  });
  // Through the queue: the timers only queue; the samples run in slices.
  const queue = new SampleQueue();
  const queued = await race((take) => {
    for (let i = 0; i < SAMPLES; i++) {
      const own = () => take(); // each feed has its own entry
      setTimeout(() => queue.push(own), 5);
    }
  });
  assert.equal(straight, SAMPLES, `straight from the timers: the I/O callback after all ${SAMPLES} samples (came after ${straight})`);
  assert.ok(queued < SAMPLES / 2, `through the queue: the I/O callback after ${queued} of ${SAMPLES} samples (slices of ${SAMPLE_SLICE_MS} ms, ${SAMPLE_MS} ms a sample)`);
});
