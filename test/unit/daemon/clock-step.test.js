// @ts-check
'use strict';
// Issue 12, fault 3: a session's feed and the controller, built and wired as sbd builds them (the
// feed takes no clock from the test), fed a wall clock that steps 15 minutes forward or back in
// the middle of a deadline, behave as if nothing happened: every window counts, the deadline
// expires at the grace, the mute after a lowering lasts its time. The guest's proof is
// test/vm/guest/43-clock-step; restarts and reboots are test/unit/daemon/saved-deadline.
const test = require('node:test');
const assert = require('node:assert/strict');
const path = require('node:path');
const { spawnSync } = require('node:child_process');
const { fakeClocks } = require('../../support/clocks.js');
const { MiB, WINDOW_MS, GRACE_MS, STEP_MS, BOOT_ID, fakeCgroup, sbd, windowThenSample, untilStandingStill } = require('../../support/sbd-session.js');

test("sbd's clock is CLOCK_MONOTONIC, one for every process of this boot, and the boot's id", () => {
  const { monotonicMs, bootId } = require('../../../dist/util/clock.js');
  const clockJs = path.resolve(__dirname, '../../../dist/util/clock.js');
  const before = monotonicMs();
  const node = Number(spawnSync(process.execPath, ['-e', `process.stdout.write(String(require(${JSON.stringify(clockJs)}).monotonicMs()))`], { encoding: 'utf8' }).stdout);
  const python = 1000 * Number(spawnSync('python3', ['-c', 'import time; print(time.clock_gettime(time.CLOCK_MONOTONIC))'], { encoding: 'utf8' }).stdout);
  const after = monotonicMs();
  assert.ok(before <= node && node <= after, `another sbd process reads the same clock: ${before} <= ${node} <= ${after}`);
  assert.ok(before <= python && python <= after, `the kernel's CLOCK_MONOTONIC: ${before} <= ${python} <= ${after}`);
  assert.equal(bootId(), BOOT_ID);
});

for (const step of [STEP_MS, -STEP_MS]) {
  test(`a step of the wall clock ${step > 0 ? 'forward' : 'back'} during a deadline: every window counts, the deadline expires at the grace`, (t) => {
    const clock = fakeClocks(t);
    const cg = fakeCgroup();
    const s = sbd(t, cg.dir);
    const start = untilStandingStill(s, clock, cg);
    assert.deepEqual(s.types(), ['standing-still', 'no-room']);
    assert.match(s.told[1].message, /stopped in 180 s/, 'the countdown is the deadline\'s own');
    const from = s.verdicts.length;
    const stepAt = clock.trueMs + 40_000; // 40 s into the deadline, the wall clock is stepped (date -s, NTP, a person)
    let expired;
    for (let i = 0; i < 120 && !expired; i++) {
      expired = windowThenSample(s, clock, cg, cg.stall, () => { if (clock.trueMs === stepAt) clock.stepWall(step); })?.event === 'deadline-expired';
    }
    assert.ok(clock.trueMs > stepAt, 'the wall clock was stepped during the deadline');
    const events = s.verdicts.slice(from).map((v) => v.event);
    assert.deepEqual([...new Set(events)], ['window', 'deadline-expired'], 'every window counted: none short, none clear');
    assert.equal(s.verdicts.at(-1).atMs - start, GRACE_MS, 'expired at the grace, neither later nor sooner');
    assert.deepEqual(s.types(), ['standing-still', 'no-room', 'nothing-to-stop'], 'the stop was tried at the grace (the fake cgroup has no process)');
  });
}

test('the mute after lowering the brake lasts its time, though the wall clock stepped back', async (t) => {
  const clock = fakeClocks(t);
  const cg = fakeCgroup();
  const s = sbd(t, cg.dir, { raise: { lowerAfterClearS: 0.001 } });
  s.controller.brake(s.session.unit).originalHigh = 64 * MiB; // raised before: 320M now
  s.session.memoryHigh = 320 * MiB;
  s.feed.sample();
  windowThenSample(s, clock, cg, cg.idle); // clear: lowering in 1 ms
  await new Promise((r) => setTimeout(r, 50));
  assert.deepEqual(s.types(), ['brake-lowered']);
  const mutedUntil = s.feed.state.mutedUntilMs;
  const mutedAt = clock.monoMs();
  clock.stepWall(-STEP_MS);
  s.feed.sample();
  for (let i = 0; i < 130; i++) windowThenSample(s, clock, cg);
  const windows = s.verdicts.filter((v) => v.window !== undefined && v.atMs > mutedUntil - s.config.detector.muteAfterLowerS * 1000);
  const firstCounted = windows.find((v) => v.event !== 'muted');
  assert.ok(firstCounted, 'windows count again after the mute');
  assert.ok(firstCounted.atMs >= mutedUntil && firstCounted.atMs < mutedUntil + WINDOW_MS, `the first window counted ${(firstCounted.atMs - mutedUntil) / 1000} s after the mute's end`);
  assert.equal(mutedUntil, mutedAt + s.config.detector.muteAfterLowerS * 1000, 'muted for muteAfterLowerS from the lowering, on the monotonic clock');
});
