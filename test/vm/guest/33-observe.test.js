// @ts-check
'use strict';
// Issue 5, scenario 5: observe-only changes nothing and says what it would have done.
const test = require('node:test');
const assert = require('node:assert/strict');
const { labOnly, readCgroupFile } = require('./helpers');
const { startSbd, incidentCollector, startAgent, stopSessions, cgroupOf, alive, sbctl } = require('./sbd-helpers');

const MiB = 2 ** 20;

test('observe-only: every would-be action is told, nothing is changed', labOnly, async (t) => {
  await startSbd({ observeOnly: true, detector: { graceS: 8 }, raise: { step: '256M', reserve: '256M' }, stop: { termToKillS: 5 } });
  const inc = await incidentCollector();
  t.after(() => { inc.close(); stopSessions('watch1'); });
  const { pids } = await startAgent('watch1', 400, 200);
  const raised = await inc.wait('watch1', 'brake-raised', 60_000);
  assert.equal(raised.observeOnly, true);
  assert.equal(raised.toBytes, 320 * MiB, 'it says what it would do');
  const willStop = await inc.wait('watch1', 'will-stop', 60_000);
  assert.equal(willStop.observeOnly, true);
  assert.deepEqual([...willStop.pids].sort(), [pids.build, pids.hog].sort());
  await new Promise((r) => setTimeout(r, 7000)); // longer than termToKillS
  assert.equal(Number(readCgroupFile(cgroupOf('watch1'), 'memory.high')), 64 * MiB, 'the brake is untouched');
  for (const who of ['agent', 'mcp', 'git', 'build', 'hog']) assert.ok(alive(pids[who]), `${who} still runs`);
  assert.deepEqual(inc.of('watch1', 'subtree-stopped'), []);
  const status = JSON.parse(sbctl('status', '--json').stdout);
  assert.equal(status.service.observeOnly, true);
  assert.match(status.sessions.find((x) => x.name === 'watch1').lastAction, /observe-only: not done/);
});
