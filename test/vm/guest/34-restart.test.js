// @ts-check
'use strict';
// Issue 5, scenario 6: sbd restarted during a deadline: the deadline continues, one stop happens, not two.
const test = require('node:test');
const assert = require('node:assert/strict');
const { labOnly, waitFor } = require('./helpers');
const { startSbd, incidentCollector, startAgent, stopSessions, alive, sbctl, systemctl } = require('./sbd-helpers');

// Long enough for sbd's restart and an sbctl status under TCG beside other guests (measured: sbd
// ready 44 s after the restart, sbctl's answer 10 s later): with 30 s the deadline had run out and
// the stop was done before status could see the deadline continue.
const GRACE_S = 90;

test('a restart during the deadline neither forgets it nor acts twice', labOnly, async (t) => {
  await startSbd({ detector: { graceS: GRACE_S }, raise: { ceiling: '64M' }, stop: { termToKillS: 5 } });
  const inc = await incidentCollector();
  t.after(() => { inc.close(); stopSessions('restart1'); });
  const { pids } = await startAgent('restart1', 400, 300);
  const still = await inc.wait('restart1', 'standing-still', 60_000);
  await new Promise((r) => setTimeout(r, 8000));
  assert.equal(systemctl('restart', 'sbd.service').status, 0);
  // The deadline left is read somewhere between the call to sbctl and its answer (seconds under
  // TCG): it must lie in that span, give or take a second of rounding, not start over at 30 s.
  let asked = 0;
  let answered = 0;
  const row = await waitFor(() => {
    asked = Date.now();
    const r = sbctl('status', 'restart1', '--json');
    answered = Date.now();
    return r.status === 0 && JSON.parse(r.stdout).sessions[0];
  }, 90_000, { what: 'the restarted sbd to answer' });
  assert.equal(row.state, 'standing-still', 'the deadline survived the restart');
  const [least, most] = [(still.atMs + GRACE_S * 1000 - answered) / 1000 - 1, (still.atMs + GRACE_S * 1000 - asked) / 1000 + 1];
  assert.ok(row.deadlineS >= least && row.deadlineS <= most, `deadline ${row.deadlineS} s left, expected ${least.toFixed(1)}-${most.toFixed(1)} s: it continued, it did not start over`);
  await inc.wait('restart1', 'subtree-stopped', (GRACE_S + 60) * 1000);
  await waitFor(() => !alive(pids.hog), 10_000, { what: 'the hog to be gone' });
  await new Promise((r) => setTimeout(r, 10_000));
  assert.equal(inc.of('restart1', 'subtree-stopped').length, 1, 'one stop, not two');
  assert.equal(inc.of('restart1', 'will-stop').length, 1);
  assert.ok(alive(pids.agent));
});
