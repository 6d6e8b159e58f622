// @ts-check
'use strict';
// Issue 5: when PSI triggers are impossible, sessions are sampled on a timer, and status and
// logs say so. A 1 s window is one way: the kernel refuses it to an unprivileged user.
const test = require('node:test');
const assert = require('node:assert/strict');
const { spawnSync } = require('node:child_process');
const { labOnly, hogArgv } = require('./helpers');
const { startSbd, incidentCollector, runSession, stopSessions, sbctl } = require('./sbd-helpers');
const { MESSAGE_IDS } = require('../../../dist/journal/message-ids.js');

test('no trigger allowed: the session is sampled on a timer, said in status and log, and still caught', labOnly, async (t) => {
  await startSbd({ detector: { windowS: 1, fallbackIntervalS: 2, graceS: 60 }, raise: { enabled: false } });
  const inc = await incidentCollector();
  t.after(() => { inc.close(); stopSessions('fallback1'); });
  runSession('fallback1', ['--memory-high', '64M', '--swap-max', '0'], hogArgv(300, 120, true));
  const fallback = await inc.wait('fallback1', 'feed-fallback', 30_000);
  assert.match(fallback.message, /sampled every 2 s: .*CAP_SYS_RESOURCE/);
  const status = JSON.parse(sbctl('status', '--json').stdout);
  assert.equal(status.service.feed, 'sampling');
  // in the journal as its own entry (issue 14: natively, with the incident's MESSAGE_ID)
  const logged = spawnSync('journalctl', ['--user', '--no-pager', '-o', 'json', `MESSAGE_ID=${MESSAGE_IDS['feed-fallback']}`, 'SESSION=fallback1'], { encoding: 'utf8' }).stdout;
  assert.match(logged, /"MESSAGE":"sampled every 2 s: [^"]*CAP_SYS_RESOURCE/);
  // Still caught: on a timer, with PSI totals as the measure.
  const still = await inc.wait('fallback1', 'standing-still', 60_000);
  assert.match(still.message, /share 0\.\d\d/);
  // (the deadline's end minus its start on the monotonic clock, in fractional ms: 59.999999999999986 is 60)
  assert.ok(Math.abs(still.deadlineS - 60) < 0.001, `PSI totals are still the measure: no doubled grace (deadline ${still.deadlineS} s)`);
});
