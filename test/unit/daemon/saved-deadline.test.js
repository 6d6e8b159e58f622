// @ts-check
'use strict';
// Issue 12, fault 3, across restarts: a deadline is saved on the monotonic clock with its boot's
// id. A restart on the same boot keeps it running (the time sbd was down counts, a step of the
// wall clock does not); one saved on another boot, or by an older sbd on the wall clock, is
// dropped and told. The feed and the controller are built as sbd builds them.
const test = require('node:test');
const assert = require('node:assert/strict');
const { fakeClocks } = require('../../support/clocks.js');
const { MiB, GRACE_MS, STEP_MS, BOOT_ID, fakeCgroup, sbd, windowThenSample, untilStandingStill } = require('../../support/sbd-session.js');

test('a restart on the same boot: the saved deadline keeps running, the time sbd was down included', (t) => {
  const clock = fakeClocks(t);
  const cg = fakeCgroup();
  const first = sbd(t, cg.dir);
  const start = untilStandingStill(first, clock, cg);
  const record = first.saved.at(-1);
  assert.deepEqual(record, { invocationId: 'a'.repeat(32), bootId: BOOT_ID, deadline: { startedAtMs: start, endsAtMs: start + GRACE_MS, currentAtStart: 63 * MiB } }, 'saved on the monotonic clock, with the boot it belongs to');
  const saved = JSON.parse(JSON.stringify(record));

  clock.advance(60_000); // sbd is down for a minute, and the wall clock steps meanwhile
  clock.stepWall(STEP_MS);
  const second = sbd(t, cg.dir);
  second.controller.restore(/** @type {any} */ (second.session), second.feed, saved);
  assert.deepEqual(second.feed.state.deadline, saved.deadline, 'the same deadline, not a new one');
  let expired = false;
  for (let i = 0; i < 120 && !expired; i++) expired = windowThenSample(second, clock, cg)?.event === 'deadline-expired';
  assert.equal(second.verdicts.at(-1).atMs, start + GRACE_MS, 'expired where it would have without the restart');
  assert.deepEqual(second.types(), ['nothing-to-stop']);
});

for (const [what, bootId, why] of /** @type {Array<[string, string | undefined, RegExp]>} */ ([['on another boot', '0f2c6a7e-1b7d-4c55-a1a9-6d1f2b0c9e11', /saved on another boot/], ['by an older sbd on the wall clock', undefined, /older sbd on the wall clock/]])) {
  test(`a deadline saved ${what} is dropped and told, not trusted`, (t) => {
    const clock = fakeClocks(t);
    const cg = fakeCgroup();
    const s = sbd(t, cg.dir);
    s.feed.sample();
    // what a deadline looks like in such a record: times of another clock
    const now = bootId === undefined ? Date.now() : clock.monoMs();
    const saved = { invocationId: 'a'.repeat(32), ...(bootId ? { bootId } : {}), deadline: { startedAtMs: now - 60_000, endsAtMs: now + 120_000, currentAtStart: 63 * MiB }, originalHigh: 32 * MiB };
    s.controller.restore(/** @type {any} */ (s.session), s.feed, /** @type {any} */ (saved));
    assert.equal(s.feed.state.deadline, undefined, 'no deadline from the saved times');
    assert.deepEqual(s.types(), ['deadline-dropped']);
    assert.match(s.told[0].message, why);
    assert.match(s.told[0].message, /a new one starts with the whole grace/);
    assert.deepEqual(s.saved.at(-1), { invocationId: 'a'.repeat(32), bootId: BOOT_ID, originalHigh: 32 * MiB }, 'saved again without it; the brake to go back to is kept');
  });
}

test('restoreDeadline: only a deadline of this boot that did not start in its future', () => {
  const { restoreDeadline } = require('../../../dist/daemon/saved-deadline.js');
  const deadline = { startedAtMs: 1000, endsAtMs: 181_000, currentAtStart: 1 };
  assert.deepEqual(restoreDeadline({ invocationId: 'x', bootId: 'b', deadline }, 'b', 500_000), { deadline }, 'ran out while sbd was down: it expires at the first window');
  assert.deepEqual(restoreDeadline({ invocationId: 'x', bootId: 'b' }, 'b', 5000), { deadline: undefined });
  const dropped = (/** @type {any} */ r) => r.dropped;
  assert.match(dropped(restoreDeadline({ invocationId: 'x', bootId: 'b', deadline }, 'b', 500)), /in this boot's future/);
  assert.match(dropped(restoreDeadline({ invocationId: 'x', bootId: 'b', deadline }, undefined, 5000)), /boot_id/);
});
