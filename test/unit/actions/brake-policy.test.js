// @ts-check
'use strict';
const test = require('node:test');
const assert = require('node:assert/strict');
const fc = require('fast-check');
const { planRaise, planLower, liftForStop, SMALLEST_USEFUL_RAISE } = require('../../../dist/actions/brake-policy.js');
const { parseMemAvailable } = require('../../../dist/actions/machine.js');

const MiB = 2 ** 20;
const base = { highBytes: 64 * MiB, maxBytes: Infinity, currentBytes: 66 * MiB, sliceHighBytes: Infinity, othersBytes: 0, memAvailableBytes: 8192 * MiB, step: 256 * MiB, ceiling: Infinity, reserve: 1024 * MiB, maxMargin: 128 * MiB };

test('with room, the brake goes up one step', () => {
  assert.deepEqual(planRaise(base), { raise: true, toBytes: 320 * MiB, limitedBy: 'step' });
});

test('never above MemoryMax, the ceiling, the slice\'s room or MemAvailable minus the reserve', () => {
  assert.deepEqual(planRaise({ ...base, maxBytes: 256 * MiB }), { raise: true, toBytes: 128 * MiB, limitedBy: 'MemoryMax minus the margin' });
  assert.deepEqual(planRaise({ ...base, ceiling: 100 * MiB }), { raise: true, toBytes: 100 * MiB, limitedBy: 'configured ceiling' });
  assert.deepEqual(planRaise({ ...base, sliceHighBytes: 320 * MiB, othersBytes: 200 * MiB }), { raise: true, toBytes: 120 * MiB, limitedBy: "the slice's brake minus the other sessions" });
  assert.deepEqual(planRaise({ ...base, memAvailableBytes: 1100 * MiB }), { raise: true, toBytes: 142 * MiB, limitedBy: 'MemAvailable minus the reserve' });
});

test('no room: a raise smaller than the smallest useful one is refused, naming the binding limit', () => {
  const plan = planRaise({ ...base, maxBytes: 64 * MiB + 128 * MiB + SMALLEST_USEFUL_RAISE - 4096 });
  assert.equal(plan.raise, false);
  assert.match(plan.why, /^no room: MemoryMax minus the margin allows 16 MiB more$/);
  assert.match(planRaise({ ...base, memAvailableBytes: 900 * MiB }).why, /MemAvailable minus the reserve allows 0 MiB more/);
});

// Issue 11, case 2: --memory-high 64M --memory-max 768M, a build that wants 1.5 GB, room on the
// machine. Before, the brake was raised to 768 MiB itself and the kernel OOM-killed the build.
test('MemoryMax is a wall: raises stop the margin short of it, then there is no room', () => {
  const wall = { ...base, maxBytes: 768 * MiB };
  const steps = [];
  let high = 64 * MiB;
  for (let plan = planRaise({ ...wall, highBytes: high, currentBytes: high }); plan.raise; plan = planRaise({ ...wall, highBytes: high, currentBytes: high })) {
    high = plan.toBytes;
    steps.push(high / MiB);
    assert.ok(steps.length < 10, 'raises must end');
  }
  assert.deepEqual(steps, [320, 576, 640], 'two steps, then up to the margin below the wall');
  const last = planRaise({ ...wall, highBytes: high, currentBytes: high });
  assert.equal(last.raise, false);
  assert.match(last.why, /^no room: MemoryMax minus the margin allows 0 MiB more$/);
});

test('a brake already within the margin of MemoryMax (set so by its owner) is never raised, nor lowered by a raise', () => {
  const plan = planRaise({ ...base, highBytes: 700 * MiB, currentBytes: 700 * MiB, maxBytes: 768 * MiB });
  assert.equal(plan.raise, false);
  assert.match(plan.why, /MemoryMax minus the margin allows 0 MiB more/);
  // a margin larger than MemoryMax itself: no raise at all, no negative brake
  assert.equal(planRaise({ ...base, maxBytes: 100 * MiB }).raise, false);
  // no MemoryMax: the margin plays no part
  assert.equal(planRaise({ ...base, maxMargin: 2 ** 40 }).raise, true);
});

test('while a command is stopped, the brake is lifted only up to MemoryMax minus the margin', () => {
  assert.equal(liftForStop(640 * MiB, 768 * MiB, 128 * MiB), 640 * MiB);
  assert.equal(liftForStop(64 * MiB, 768 * MiB, 128 * MiB), 640 * MiB);
  assert.equal(liftForStop(64 * MiB, Infinity, 128 * MiB), Infinity, 'no wall: lifted altogether');
  assert.equal(liftForStop(700 * MiB, 768 * MiB, 128 * MiB), 700 * MiB, 'never below the brake it has');
  assert.equal(liftForStop(64 * MiB, 768 * MiB + 100, 128 * MiB) % 4096, 0, 'whole pages');
});

test('property: a raise never exceeds any bound and is whole pages', () => {
  fc.assert(fc.property(fc.record({
    highBytes: fc.integer({ min: 1, max: 4096 }).map((m) => m * MiB), maxBytes: fc.oneof(fc.constant(Infinity), fc.integer({ min: 1, max: 8192 }).map((m) => m * MiB)),
    currentBytes: fc.integer({ min: 0, max: 4096 }).map((m) => m * MiB), sliceHighBytes: fc.oneof(fc.constant(Infinity), fc.integer({ min: 1, max: 8192 }).map((m) => m * MiB)),
    othersBytes: fc.integer({ min: 0, max: 4096 }).map((m) => m * MiB), memAvailableBytes: fc.integer({ min: 0, max: 16384 }).map((m) => m * MiB),
    step: fc.integer({ min: 1, max: 1024 }).map((m) => m * MiB), ceiling: fc.oneof(fc.constant(Infinity), fc.integer({ min: 1, max: 8192 }).map((m) => m * MiB)), reserve: fc.integer({ min: 0, max: 2048 }).map((m) => m * MiB),
    maxMargin: fc.integer({ min: 0, max: 1024 }).map((m) => m * MiB),
  }), (i) => {
    const p = planRaise(i);
    if (!p.raise) return true;
    return p.toBytes <= i.maxBytes - i.maxMargin && p.toBytes <= i.ceiling && p.toBytes <= i.sliceHighBytes - i.othersBytes &&
      p.toBytes <= i.currentBytes + i.memAvailableBytes - i.reserve && p.toBytes <= i.highBytes + i.step &&
      p.toBytes - i.highBytes >= SMALLEST_USEFUL_RAISE && p.toBytes % 4096 === 0;
  }));
});

test('lowering goes back in steps to the original brake, never below it', () => {
  assert.equal(planLower(576 * MiB, 64 * MiB, 256 * MiB), 320 * MiB);
  assert.equal(planLower(320 * MiB, 64 * MiB, 256 * MiB), 64 * MiB);
  assert.equal(planLower(64 * MiB, 64 * MiB, 256 * MiB), undefined);
});

test('MemAvailable from /proc/meminfo', () => {
  assert.equal(parseMemAvailable('MemTotal:       24576000 kB\nMemFree:        100 kB\nMemAvailable:   23000000 kB\n'), 23000000 * 1024);
  assert.throws(() => parseMemAvailable('MemTotal: 1 kB\n'), /no MemAvailable line/);
});

test('whole pages of the system\'s size: a 64K-page kernel rounds the brake to 64K (issue 12, fault 9)', () => {
  const KiB64 = 65536;
  const plan = planRaise({ ...base, maxBytes: 700 * MiB + 4096, pageBytes: KiB64 });
  assert.equal(plan.raise, true);
  assert.equal(plan.raise && plan.toBytes % KiB64, 0, 'a raise is whole 64K pages');
  assert.equal(liftForStop(64 * MiB, 768 * MiB + 4096, 128 * MiB, KiB64) % KiB64, 0, 'the lift is whole 64K pages');
});
