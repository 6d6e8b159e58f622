// @ts-check
'use strict';
// Issue 11, guest test 4: two sessions without brakes on a machine that runs out: the greedy
// one's build is stopped before the kernel's OOM killer fires; the other session is untouched.
const test = require('node:test');
const assert = require('node:assert/strict');
const path = require('node:path');
const { labOnly, waitFor, readCgroupFile, parseKeyed } = require('./helpers');
const { incidentCollector, runSession, startAgent, startSbd, stopSessions, cgroupOf, alive, sbctl } = require('./sbd-helpers');
const { MiB, NBR, sleep, rounds, innocentAndGreedy } = require('./slice-helpers');

test('the machine runs out: the greedy build is stopped before the kernel OOM killer', labOnly, async (t) => {
  await startSbd({ detector: { graceS: 10 } });
  const inc = await incidentCollector();
  t.after(() => { inc.close(); stopSessions('quiet', 'hungry'); });
  const quiet = runSession('quiet', ['--swap-max', '0'], ['python3', '-c', 'import time\nk = [b"\\x01" * (1 << 20) for _ in range(200)]\nprint("holding", flush=True)\ntime.sleep(600)']);
  await waitFor(() => /holding/.test(quiet.output()), 60_000, { what: 'the quiet session to hold its memory' });
  const quietPid = Number(readCgroupFile(cgroupOf('quiet'), 'cgroup.procs').split('\n')[0]);
  const hungry = await startAgent('hungry', 4096, 180, ['--swap-max', '0']);
  const critical = await waitFor(() => inc.incidents.find((i) => i.type === 'machine-short'), 180_000, { what: 'sbd to see the machine nearly out of memory' });
  t.diagnostic(`machine-short: ${critical.message}`);
  await inc.wait('hungry', 'subtree-stopped', 30_000);
  await waitFor(() => !alive(hungry.pids.hog), 10_000, { what: 'the hungry build to be gone' });
  for (const name of ['quiet', 'hungry']) {
    const ev = parseKeyed(readCgroupFile(cgroupOf(name), 'memory.events'));
    assert.equal(ev.oom_kill, 0, `no kernel OOM kill in ${name}`);
  }
  assert.ok(alive(hungry.pids.agent), "the hungry session's agent lives");
  assert.ok(alive(quietPid), 'the quiet session is untouched');
  assert.deepEqual(inc.of('quiet', 'will-stop'), []);
});
