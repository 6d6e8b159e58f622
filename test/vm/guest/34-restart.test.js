// @ts-check
'use strict';
// Issue 5, scenario 6: sbd restarted during a deadline: the deadline continues, one stop happens, not two.
const test = require('node:test');
const assert = require('node:assert/strict');
const { labOnly, waitFor } = require('./helpers');
const { startSbd, incidentCollector, startAgent, stopSessions, alive, sbctl, systemctl } = require('./sbd-helpers');

test('a restart during the deadline neither forgets it nor acts twice', labOnly, async (t) => {
  await startSbd({ detector: { graceS: 30 }, raise: { ceiling: '64M' }, stop: { termToKillS: 5 } });
  const inc = await incidentCollector();
  t.after(() => { inc.close(); stopSessions('restart1'); });
  const { pids } = await startAgent('restart1', 400, 300);
  const still = await inc.wait('restart1', 'standing-still', 60_000);
  await new Promise((r) => setTimeout(r, 8000));
  assert.equal(systemctl('restart', 'sbd.service').status, 0);
  const row = await waitFor(() => {
    const r = sbctl('status', 'restart1', '--json');
    return r.status === 0 && JSON.parse(r.stdout).sessions[0];
  }, 30_000, { what: 'the restarted sbd to answer' });
  assert.equal(row.state, 'standing-still', 'the deadline survived the restart');
  const expected = (still.atMs + 30_000 - Date.now()) / 1000;
  assert.ok(Math.abs(row.deadlineS - expected) < 5, `deadline ${row.deadlineS} s left, expected about ${expected.toFixed(0)} s: it continued, it did not start over`);
  await inc.wait('restart1', 'subtree-stopped', 60_000);
  await waitFor(() => !alive(pids.hog), 10_000, { what: 'the hog to be gone' });
  await new Promise((r) => setTimeout(r, 10_000));
  assert.equal(inc.of('restart1', 'subtree-stopped').length, 1, 'one stop, not two');
  assert.equal(inc.of('restart1', 'will-stop').length, 1);
  assert.ok(alive(pids.agent));
});
