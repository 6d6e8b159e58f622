// @ts-check
'use strict';
// Issue 11, guest test 1 again with slice raising allowed: the slice's brake is raised instead,
// nothing is stopped, and both sessions finish.
const test = require('node:test');
const assert = require('node:assert/strict');
const path = require('node:path');
const { labOnly, waitFor, readCgroupFile, parseKeyed } = require('./helpers');
const { incidentCollector, runSession, startAgent, startSbd, stopSessions, cgroupOf, alive, sbctl } = require('./sbd-helpers');
const { MiB, NBR, sleep, rounds, innocentAndGreedy } = require('./slice-helpers');

test("a slice's brake with slice raising allowed: the slice's brake is raised and both finish", labOnly, async (t) => {
  const { inc, innocent, greedy } = await innocentAndGreedy(t, { arbitration: { raiseSlice: true, sliceStep: '512M' }, raise: { reserve: '256M' } });
  const raised = await waitFor(() => inc.incidents.find((i) => i.type === 'slice-brake-raised' && i.unit === 'nbr.slice'), 90_000, { what: "the slice's brake to be raised" });
  t.diagnostic(`slice-brake-raised: ${raised.message}`);
  assert.ok(Number(readCgroupFile(NBR, 'memory.high')) > 320 * MiB, "the slice's memory.high went up");
  await waitFor(() => /build touched 900 MiB/.test(greedy.output()), 150_000, { what: "the greedy's build to finish its 900 MiB" });
  const before = rounds(innocent.output());
  await sleep(20_000); // a line per 10 rounds: under load 10 rounds took 7.5 s
  assert.ok(rounds(innocent.output()) > before, 'the innocent still completes rounds');
  assert.deepEqual(inc.incidents.filter((i) => i.type === 'will-stop'), [], 'nothing was stopped');
  assert.equal(readCgroupFile(path.join(NBR, 'innocent.scope'), 'memory.high'), String(2 * 1024 * MiB), "the innocent's brake is untouched");
});

