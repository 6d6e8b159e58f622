// @ts-check
'use strict';
// Issue 12, fault 3: sbd measures every interval on the monotonic clock. A step of the wall clock
// by 15 minutes, forward or back, during a running deadline changes nothing: the biggest command
// is stopped at the grace, neither later nor sooner, and status counts the deadline down honestly.
// The clock is stepped by root (43-clock-step.root.sh); every time here is performance.now(), the
// monotonic clock, and the wall clock is put back when the file ends.
const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const { labOnly, waitFor } = require('./helpers');
const { startSbd, incidentCollector, startAgent, stopSessions, sbctl } = require('./sbd-helpers');

// Short, so that the file stays short; long enough for the step and an sbctl status inside it
// (sbctl status took 24 s to answer under TCG with three guests on the host).
const GRACE_S = 40;
/** The detector's window (sbd's default): the deadline is checked once per window. */
const WINDOW_S = 2;
/** 15 minutes: the step of the issue's measurement. */
const STEP_S = 900;
/** Into the deadline when the clock is stepped: past the first windows, well before the end. */
const STEP_AFTER_S = 10;
// Tolerance of the stop: both incidents are told by sbd at a sample and reach this process the
// same way, so the span between them is the grace plus at most one window (the deadline is
// checked at each sample) plus the stop's own work before will-stop is told (reading /proc,
// taking pidfds) and the jitter of two D-Bus deliveries: measured 0.1 s on top of the grace, and
// 6.3 s (a window included) with three guests on the host and sbctl status running beside; 6 s
// of slack beyond the window. A restarted episode (the fault after a step forward) comes
// STEP_AFTER_S + two windows after the grace at the soonest (measured 19.9 s after it): outside.
const SOONEST_S = GRACE_S - 1;
const LATEST_S = GRACE_S + WINDOW_S + 6;

const REQ = '/tmp/sb-clock/req';

/** How far the wall clock was stepped since this process started (ms): 0 when it was not. */
const wallStepMs = () => Date.now() - (performance.timeOrigin + performance.now());

/** Ask root's helper to step the wall clock by `seconds` (or 'restore'), and wait until it did. */
async function stepClock(/** @type {number | 'restore'} */ seconds, expectMs) {
  const before = wallStepMs();
  // O_NONBLOCK: with no helper reading, open fails (ENXIO) instead of hanging the test
  const fd = fs.openSync(REQ, fs.constants.O_WRONLY | fs.constants.O_NONBLOCK);
  fs.writeSync(fd, `${seconds === 'restore' ? 'restore' : seconds > 0 ? `+${seconds}` : String(seconds)}\n`);
  fs.closeSync(fd);
  if (expectMs === undefined) return;
  await waitFor(() => Math.abs(wallStepMs() - before - expectMs) < 2000, 10_000, { what: `the wall clock to step by ${expectMs / 1000} s` });
}

test('a step of the wall clock during a deadline: the stop comes at the grace', labOnly, async (t) => {
  assert.ok(fs.existsSync(REQ), "root's clock helper runs (43-clock-step.root.sh)");
  await startSbd({ detector: { graceS: GRACE_S, windowS: WINDOW_S }, raise: { ceiling: '64M' }, stop: { termToKillS: 5 } });
  let restored = false;
  t.after(async () => { // whatever happened: the guest's clock as it was
    if (!restored) await stepClock('restore').catch((err) => t.diagnostic(`restoring the clock: ${err.message}`));
  });

  for (const [name, step] of /** @type {const} */ ([['clockfwd', STEP_S], ['clockback', -STEP_S]])) {
    await t.test(`${step > 0 ? 'forward' : 'back'} ${Math.abs(step)} s`, async (tt) => {
      const inc = await incidentCollector();
      tt.after(() => { inc.close(); stopSessions(name); });
      await startAgent(name, 400, 300);
      const still = await inc.wait(name, 'standing-still', 90_000);
      assert.ok(Math.abs(still.deadlineS - GRACE_S) < 1, `a deadline of the grace began: ${still.deadlineS} s`);
      await new Promise((r) => setTimeout(r, Math.max(0, still.receivedMonoMs + STEP_AFTER_S * 1000 - performance.now())));
      await stepClock(step, step * 1000);
      const steppedAt = performance.now();

      // status, asked after the step: the deadline left is what the monotonic clock says
      const asked = performance.now();
      const r = sbctl('status', name, '--json');
      const answered = performance.now();
      assert.equal(r.status, 0, r.stderr);
      const row = JSON.parse(r.stdout).sessions[0];
      if (row.state === 'standing-still') {
        const [least, most] = [GRACE_S - (answered - still.receivedMonoMs) / 1000 - 1, GRACE_S - (asked - still.receivedMonoMs) / 1000 + 1];
        assert.ok(row.deadlineS >= least && row.deadlineS <= most, `status after the step: ${row.deadlineS} s left, expected ${least.toFixed(1)}-${most.toFixed(1)} s`);
      } else {
        t.diagnostic(`${name}: status answered ${((answered - steppedAt) / 1000).toFixed(1)} s after the step, in state ${row.state}: the deadline left was not checked`);
      }

      const stop = await waitFor(() => inc.of(name, 'will-stop')[0], (LATEST_S + 20) * 1000 - (performance.now() - still.receivedMonoMs), { what: `the stop of ${name}` })
        .catch((err) => assert.fail(`${err.message}; incidents: ${inc.of(name).map((i) => i.type).join(', ')}`));
      const tookS = (stop.receivedMonoMs - still.receivedMonoMs) / 1000;
      t.diagnostic(`${name}: stepped ${step} s, ${STEP_AFTER_S} s into a ${GRACE_S} s grace; stop ${tookS.toFixed(1)} s after standing-still`);
      assert.deepEqual(inc.of(name).map((i) => i.type).filter((x) => x === 'standing-still' || x === 'cleared'), ['standing-still'], 'the episode did not start over');
      assert.ok(tookS >= SOONEST_S && tookS <= LATEST_S, `stopped ${tookS.toFixed(1)} s after standing still, expected ${SOONEST_S}-${LATEST_S} s (grace ${GRACE_S} s)`);
    });
  }
  await stepClock('restore', -wallStepMs());
  restored = true;
  assert.ok(Math.abs(wallStepMs()) < 2000, `the wall clock is back: ${(wallStepMs() / 1000).toFixed(1)} s off`);
});
