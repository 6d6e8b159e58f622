// @ts-check
'use strict';
// Issue 11, guest test 1: an innocent working session and a greedy one under a slice's
// collective brake: the greedy's build is stopped, its agent lives, the innocent keeps working
// with its brake untouched, and sbctl status shows the slice and its members.
const test = require('node:test');
const assert = require('node:assert/strict');
const path = require('node:path');
const { labOnly, waitFor, readCgroupFile, parseKeyed } = require('./helpers');
const { incidentCollector, runSession, startAgent, startSbd, stopSessions, cgroupOf, alive, sbctl } = require('./sbd-helpers');
const { MiB, NBR, sleep, rounds, innocentAndGreedy } = require('./slice-helpers');

test("a slice's brake: the greedy's build is stopped, the innocent keeps working untouched", labOnly, async (t) => {
  const { inc, innocent, greedy } = await innocentAndGreedy(t, {});
  const still = await waitFor(() => inc.incidents.find((i) => i.type === 'slice-standing-still' && i.unit === 'nbr.slice'), 90_000, { what: 'the slice to stand still' });
  t.diagnostic(`slice-standing-still: ${still.message}`);
  assert.equal(still.cause, 'slice-brake');
  assert.equal(still.culprit, 'greedy.scope', `the greedy one is judged the culprit: ${still.message}`);
  assert.ok(['grew-most', 'above-fair-share'].includes(still.rule));
  const culprit = await inc.wait('greedy', 'culprit', 10_000);
  assert.match(culprit.message, /culprit of nbr\.slice/);
  const willStop = await inc.wait('greedy', 'will-stop', 60_000);
  assert.deepEqual([...willStop.pids].sort(), [greedy.pids.build, greedy.pids.hog].sort(), "exactly the greedy's build");
  assert.equal(willStop.slice, 'nbr.slice');
  await inc.wait('greedy', 'subtree-stopped', 30_000);
  await waitFor(() => !alive(greedy.pids.hog), 10_000, { what: 'the greedy build to be gone' });
  for (const who of ['agent', 'mcp', 'git']) assert.ok(alive(greedy.pids[who]), `the greedy's ${who} still runs`);

  const before = rounds(innocent.output());
  await sleep(15_000);
  const after = rounds(innocent.output());
  t.diagnostic(`innocent rounds: ${before} at the stop, ${after} 15 s later`);
  assert.ok(after > before, 'the innocent still completes rounds after the stop');
  assert.equal(readCgroupFile(path.join(NBR, 'innocent.scope'), 'memory.high'), String(2 * 1024 * MiB), "the innocent's brake is untouched");
  for (const type of ['culprit', 'will-stop', 'standing-still', 'brake-raised']) assert.deepEqual(inc.of('innocent', type), [], `no ${type} for the innocent`);
  const status = JSON.parse(sbctl('status', '--json').stdout);
  const row = status.slices.find((s) => s.slice === 'nbr.slice');
  assert.ok(row && row.members.some((m) => m.path === 'innocent.scope'), 'sbctl status shows the slice and its members');
});

