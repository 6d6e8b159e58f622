// @ts-check
'use strict';
// Issue 11, guest tests 1 and 4: stalls that are not one session's own. An innocent working
// session and a greedy one under a slice's collective brake: the greedy's build is stopped, its
// agent lives, the innocent keeps working with its brake untouched; with slice raising allowed,
// the slice's brake is raised instead and both finish. And two sessions without brakes on a
// machine that runs out: the greedy's build is stopped before the kernel's OOM killer fires.
const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { labOnly, waitFor, readCgroupFile, parseKeyed } = require('./helpers');
const { startSbd, incidentCollector, runSession, startAgent, stopSessions, cgroupOf, alive, systemctl, sbctl } = require('./sbd-helpers');

const MiB = 2 ** 20;
const NBR = '/sys/fs/cgroup/user.slice/user-1000.slice/user@1000.service/nbr.slice';
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

// Holds 165 MiB and keeps mapping, touching and unmapping 16 MiB; prints a line per 10 rounds.
const INNOCENT = `
import mmap, sys, time
keep = [b"\\x01" * (1 << 20) for _ in range(165)]
n = 0
while True:
    m = mmap.mmap(-1, 16 << 20)
    for off in range(0, 16 << 20, 4096): m[off] = 2
    m.close(); n += 1
    if n % 10 == 0: print("round", n, flush=True)
    time.sleep(0.01)
`;
const rounds = (out) => (out.match(/^round \d+$/gm) ?? []).length * 10;

function nbrSlice(high) {
  const unitDir = path.join(os.homedir(), '.config/systemd/user');
  fs.mkdirSync(unitDir, { recursive: true });
  fs.writeFileSync(path.join(unitDir, 'nbr.slice'), `[Slice]\nMemoryHigh=${high}\nMemorySwapMax=0\n`);
  systemctl('daemon-reload');
  // a runtime raise of an earlier test must not linger in the slice
  systemctl('set-property', '--runtime', 'nbr.slice', `MemoryHigh=${high}`);
}

async function innocentAndGreedy(t, config) {
  nbrSlice('320M');
  await startSbd({ slices: ['nbr.slice'], detector: { graceS: 10 }, stop: { termToKillS: 5 }, ...config });
  const inc = await incidentCollector();
  t.after(() => { inc.close(); stopSessions('innocent', 'greedy'); });
  const innocent = runSession('innocent', ['--slice', 'nbr.slice', '--memory-high', '2G', '--swap-max', '0'], ['python3', '-c', INNOCENT]);
  await waitFor(() => rounds(innocent.output()) >= 10, 60_000, { what: 'the innocent to work' });
  const greedy = await startAgent('greedy', 900, 150, ['--slice', 'nbr.slice', '--memory-high', '2G', '--swap-max', '0']);
  return { inc, innocent, greedy };
}

test("a slice's brake: the greedy's build is stopped, the innocent keeps working untouched", labOnly, async (t) => {
  const { inc, innocent, greedy } = await innocentAndGreedy(t, {});
  const still = await waitFor(() => inc.incidents.find((i) => i.type === 'slice-standing-still' && i.unit === 'nbr.slice'), 90_000, { what: 'the slice to stand still' });
  t.diagnostic(`slice-standing-still: ${still.message}`);
  assert.equal(still.cause, 'slice-brake');
  assert.equal(still.culprit, 'greedy.scope', 'the greedy one is judged the culprit');
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

test("a slice's brake with slice raising allowed: the slice's brake is raised and both finish", labOnly, async (t) => {
  const { inc, innocent, greedy } = await innocentAndGreedy(t, { arbitration: { raiseSlice: true, sliceStep: '512M' }, raise: { reserve: '256M' } });
  const raised = await waitFor(() => inc.incidents.find((i) => i.type === 'slice-brake-raised' && i.unit === 'nbr.slice'), 90_000, { what: "the slice's brake to be raised" });
  t.diagnostic(`slice-brake-raised: ${raised.message}`);
  assert.ok(Number(readCgroupFile(NBR, 'memory.high')) > 320 * MiB, "the slice's memory.high went up");
  await waitFor(() => /build touched 900 MiB/.test(greedy.output()), 150_000, { what: "the greedy's build to finish its 900 MiB" });
  const before = rounds(innocent.output());
  await sleep(5_000);
  assert.ok(rounds(innocent.output()) > before, 'the innocent still completes rounds');
  assert.deepEqual(inc.incidents.filter((i) => i.type === 'will-stop'), [], 'nothing was stopped');
  assert.equal(readCgroupFile(path.join(NBR, 'innocent.scope'), 'memory.high'), String(2 * 1024 * MiB), "the innocent's brake is untouched");
});

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
