// @ts-check
'use strict';
// Issue 13: expiresAt on the monotonic clock (pure): the deadline kept on the same boot, read anew
// from the wall clock on another, timers in steps setTimeout can take, a past expiry refused.
const test = require('node:test');
const assert = require('node:assert/strict');
const { expiryDeadline, expiresAtAsNowMs, timerDelayMs, pastExpiry, MAX_TIMER_MS } = require('../../../dist/monitor/expiry.js');

const WALL = Date.UTC(2026, 11, 1, 3, 0, 0);

test('first start: the time left read from the wall clock, kept with the boot id', () => {
  assert.deepEqual(expiryDeadline(WALL + 60_000, undefined, { wallMs: WALL, monoMs: 5000, bootId: 'b1' }), { atMonoMs: 65_000, save: { bootId: 'b1', atMonoMs: 65_000 } });
});

test('the same boot: the kept deadline, whatever the wall clock says now', () => {
  const kept = { bootId: 'b1', atMonoMs: 65_000 };
  assert.deepEqual(expiryDeadline(WALL + 60_000, kept, { wallMs: WALL + 3_600_000, monoMs: 10_000, bootId: 'b1' }), { atMonoMs: 65_000, save: undefined });
  assert.equal(expiresAtAsNowMs(WALL + 60_000, kept, { wallMs: WALL + 3_600_000, monoMs: 10_000, bootId: 'b1' }), WALL + 3_600_000 + 55_000, 'told in the wall clock of now: 55 s from now');
});

test('another boot, or no boot id: read anew (and kept only when the boot is known)', () => {
  const kept = { bootId: 'b0', atMonoMs: 99_999_999 };
  assert.deepEqual(expiryDeadline(WALL + 60_000, kept, { wallMs: WALL, monoMs: 100, bootId: 'b1' }), { atMonoMs: 60_100, save: { bootId: 'b1', atMonoMs: 60_100 } });
  assert.deepEqual(expiryDeadline(WALL + 60_000, kept, { wallMs: WALL, monoMs: 100, bootId: undefined }), { atMonoMs: 60_100, save: undefined });
});

test('timer delays: what is left, never beyond setTimeout\'s range, 0 when due', () => {
  assert.equal(timerDelayMs(10_000, 4_000), 6_000);
  assert.equal(timerDelayMs(1e12, 0), MAX_TIMER_MS);
  assert.equal(timerDelayMs(1_000, 4_000), 0);
});

test('an expiresAt already past is refused with what the time is here', () => {
  assert.match(pastExpiry('2026-12-01T02:59:59Z', WALL) ?? '', /^expiresAt 2026-12-01T02:59:59Z has already passed \(it is 2026-12-01T03:00:00.000Z here\): give a time in the future$/);
  assert.equal(pastExpiry('2026-12-01T03:00:01Z', WALL), undefined);
  assert.equal(pastExpiry(undefined, WALL), undefined);
});
