// @ts-check
'use strict';
const test = require('node:test');
const assert = require('node:assert/strict');
const fc = require('fast-check');
const { planRaise, planLower, SMALLEST_USEFUL_RAISE } = require('../../../dist/actions/brake-policy.js');
const { parseMemAvailable } = require('../../../dist/actions/machine.js');

const MiB = 2 ** 20;
const base = { highBytes: 64 * MiB, maxBytes: Infinity, currentBytes: 66 * MiB, sliceHighBytes: Infinity, othersBytes: 0, memAvailableBytes: 8192 * MiB, step: 256 * MiB, ceiling: Infinity, reserve: 1024 * MiB };

test('with room, the brake goes up one step', () => {
  assert.deepEqual(planRaise(base), { raise: true, toBytes: 320 * MiB, limitedBy: 'step' });
});

test('never above MemoryMax, the ceiling, the slice\'s room or MemAvailable minus the reserve', () => {
  assert.deepEqual(planRaise({ ...base, maxBytes: 128 * MiB }), { raise: true, toBytes: 128 * MiB, limitedBy: 'MemoryMax' });
  assert.deepEqual(planRaise({ ...base, ceiling: 100 * MiB }), { raise: true, toBytes: 100 * MiB, limitedBy: 'configured ceiling' });
  assert.deepEqual(planRaise({ ...base, sliceHighBytes: 320 * MiB, othersBytes: 200 * MiB }), { raise: true, toBytes: 120 * MiB, limitedBy: "the slice's brake minus the other sessions" });
  assert.deepEqual(planRaise({ ...base, memAvailableBytes: 1100 * MiB }), { raise: true, toBytes: 142 * MiB, limitedBy: 'MemAvailable minus the reserve' });
});

test('no room: a raise smaller than the smallest useful one is refused, naming the binding limit', () => {
  const plan = planRaise({ ...base, maxBytes: 64 * MiB + SMALLEST_USEFUL_RAISE - 4096 });
  assert.equal(plan.raise, false);
  assert.match(plan.why, /^no room: MemoryMax allows 16 MiB more$/);
  assert.match(planRaise({ ...base, memAvailableBytes: 900 * MiB }).why, /MemAvailable minus the reserve allows 0 MiB more/);
});

test('property: a raise never exceeds any bound and is whole pages', () => {
  fc.assert(fc.property(fc.record({
    highBytes: fc.integer({ min: 1, max: 4096 }).map((m) => m * MiB), maxBytes: fc.oneof(fc.constant(Infinity), fc.integer({ min: 1, max: 8192 }).map((m) => m * MiB)),
    currentBytes: fc.integer({ min: 0, max: 4096 }).map((m) => m * MiB), sliceHighBytes: fc.oneof(fc.constant(Infinity), fc.integer({ min: 1, max: 8192 }).map((m) => m * MiB)),
    othersBytes: fc.integer({ min: 0, max: 4096 }).map((m) => m * MiB), memAvailableBytes: fc.integer({ min: 0, max: 16384 }).map((m) => m * MiB),
    step: fc.integer({ min: 1, max: 1024 }).map((m) => m * MiB), ceiling: fc.oneof(fc.constant(Infinity), fc.integer({ min: 1, max: 8192 }).map((m) => m * MiB)), reserve: fc.integer({ min: 0, max: 2048 }).map((m) => m * MiB),
  }), (i) => {
    const p = planRaise(i);
    if (!p.raise) return true;
    return p.toBytes <= i.maxBytes && p.toBytes <= i.ceiling && p.toBytes <= i.sliceHighBytes - i.othersBytes &&
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
