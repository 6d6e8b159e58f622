// @ts-check
'use strict';
// Issue 12, fault 2: sbd restarted while a SIGTERM-ignoring build is between SIGTERM and
// SIGKILL. The brake stays on through the grace (before, it was lifted at SIGTERM, and a restart
// left it lifted: the build ran the machine out); the restarted sbd SIGKILLs the build at the
// due time, puts the brake back and tells; the agent and the others live on.
const test = require('node:test');
const assert = require('node:assert/strict');
const path = require('node:path');
const { spawn, spawnSync } = require('node:child_process');
const { labOnly, waitFor, readCgroupFile } = require('./helpers');
const { startSbd, incidentCollector, runSession, stopSessions, cgroupOf, alive, systemctl } = require('./sbd-helpers');

const MiB = 2 ** 20;
const BRAKE = 64 * MiB;
// The product's default grace: room for sbd's restart under TCG (ready 15-44 s after a restart
// beside other guests, 20-sessions and 34-restart measured) to land well before SIGKILL is due.
const TERM_TO_KILL_S = 30;
// sbd restarts this long after SIGTERM went out, as in the measured failure (3 s).
const RESTART_AFTER_S = 3;
// How late the SIGKILL may come after it is due (or after the restarted sbd was ready, when that
// was later): the polls here, pidfd exit and TCG's slowness.
const KILL_SLACK_S = 5;

test('sbd restarted between SIGTERM and SIGKILL: the brake held through the grace, the build SIGKILLed at the due time, the brake back', labOnly, async (t) => {
  await startSbd({ detector: { graceS: 10 }, raise: { ceiling: '64M' }, stop: { termToKillS: TERM_TO_KILL_S } });
  const inc = await incidentCollector();
  // SIG_IGN for SIGTERM survives exec and fork: the agent, its build and the build's child all ignore it.
  const agentPy = path.join(__dirname, 'fixtures/agent.py');
  const run = runSession('midstop1', ['--memory-high', '64M', '--memory-max', '1G', '--swap-max', '0'], ['sh', '-c', `trap '' TERM; exec python3 ${agentPy} 400 300`]);
  /** @type {Record<string, number>} */
  let pids = {};
  t.after(() => {
    inc.close();
    for (const pid of Object.values(pids)) try { process.kill(pid, 'SIGKILL'); } catch { /* gone */ }
    run.child.kill('SIGKILL');
    stopSessions('midstop1');
  });
  pids = await waitFor(() => {
    const line = run.output().split('\n').find((l) => l.startsWith('{"agent"'));
    return line && JSON.parse(line);
  }, 60_000, { what: 'the agent to report its pids' });
  const cg = cgroupOf('midstop1');

  const willStop = await inc.wait('midstop1', 'will-stop', 120_000);
  assert.deepEqual([...willStop.pids].sort(), [pids.build, pids.hog].sort(), 'the build subtree');
  const dueAtMs = willStop.atMs + TERM_TO_KILL_S * 1000;

  // memory.high and the build's life sampled through the grace, the restart included: the
  // restarted sbd may be ready only after the SIGKILL was due (31 s to READY under CI's load), so
  // whether the build lived until then is read from the samples, not from one look afterwards
  /** @type {Array<[number, string]>} */
  const samples = [];
  /** @type {Array<[number, boolean]>} */
  const lives = [];
  const sampler = setInterval(() => {
    lives.push([Date.now(), alive(pids.hog) && alive(pids.build)]);
    try { samples.push([Date.now(), readCgroupFile(cg, 'memory.high')]); } catch { /* gone */ }
  }, 250);
  t.after(() => clearInterval(sampler));

  await new Promise((r) => setTimeout(r, Math.max(0, willStop.atMs + RESTART_AFTER_S * 1000 - Date.now())));
  assert.ok(alive(pids.hog) && alive(pids.build), 'the build ignores SIGTERM');
  // asynchronously, so that the sampling goes on; a Type=notify start job ends at READY=1
  const restart = spawn('systemctl', ['--user', 'restart', 'sbd.service'], { stdio: 'ignore' });
  const restartedAtMs = Date.now();
  const readyAtMs = await new Promise((resolve, reject) => restart.on('exit', (code) => (code === 0 ? resolve(Date.now()) : reject(new Error(`systemctl --user restart sbd: exit ${code}`)))));
  t.diagnostic(`restart at +${((restartedAtMs - willStop.atMs) / 1000).toFixed(1)} s, sbd ready at +${((readyAtMs - willStop.atMs) / 1000).toFixed(1)} s, SIGKILL due at +${TERM_TO_KILL_S} s`);
  // where the restart's time went (old sbd stopping, new one starting, adopting, ready), by
  // sbd's own lines on the journal's monotonic clock: a slow restart is then explained by data
  const timeline = spawnSync('journalctl', ['--user', '-u', 'sbd.service', '--no-pager', '-o', 'short-monotonic', '--since', `@${Math.floor(restartedAtMs / 1000) - 1}`], { encoding: 'utf8' }).stdout
    .split('\n').map((l) => {
      const m = /^\[\s*([\d.]+)\][^:]*: (?:<\d>)?(.*)$/.exec(l);
      if (!m) return '';
      let text = m[2];
      try { text = JSON.parse(text).msg ?? text; } catch { /* systemd's own line */ }
      return `${m[1]} ${text.slice(0, 100)}`;
    }).filter((l) => /stopping|Stopped|Starting|starting|adopted|finish|ready|Started/.test(l));
  t.diagnostic(`the restart, from the journal: ${timeline.join(' | ')}`);

  // the grace, up to a second before SIGKILL is due: the brake must have held all along
  await new Promise((r) => setTimeout(r, Math.max(0, dueAtMs - 1000 - Date.now())));
  const grace = samples.filter(([at]) => at < dueAtMs - 1000);
  assert.ok(grace.length >= 20, `memory.high sampled through the grace (${grace.length} samples)`);
  const lifted = grace.filter(([, v]) => Number(v) !== BRAKE);
  assert.deepEqual(lifted.map(([at, v]) => `+${((at - willStop.atMs) / 1000).toFixed(1)} s: ${v}`), [], 'the brake was never lifted during the TERM grace');
  const diedEarly = lives.filter(([at, up]) => at < dueAtMs - 1000 && !up).map(([at]) => `+${((at - willStop.atMs) / 1000).toFixed(1)} s`);
  assert.deepEqual(diedEarly.slice(0, 1), [], 'the build ignores SIGTERM: alive until a second before SIGKILL was due');

  await waitFor(() => !alive(pids.hog) && !alive(pids.build), 90_000, { intervalMs: 200, what: 'the build to be killed' });
  clearInterval(sampler);
  // the first sample that found it dead (it may have died while the restart was still under way)
  const goneAtMs = (lives.find(([, up]) => !up) ?? [Date.now()])[0];
  const killBy = Math.max(dueAtMs, readyAtMs) + KILL_SLACK_S * 1000;
  t.diagnostic(`build gone at +${((goneAtMs - willStop.atMs) / 1000).toFixed(1)} s after SIGTERM`);
  assert.ok(goneAtMs <= killBy, `the build died ${((goneAtMs - killBy) / 1000).toFixed(1)} s after the latest acceptable time (due, or the restarted sbd ready, + ${KILL_SLACK_S} s)`);

  const finished = await inc.wait('midstop1', 'stop-finished', 30_000);
  assert.deepEqual([...finished.killed].sort(), [pids.build, pids.hog].sort(), 'the restarted sbd SIGKILLed the build');
  assert.ok(finished.atMs >= restartedAtMs, 'told by the restarted sbd');
  await waitFor(() => Number(readCgroupFile(cg, 'memory.high')) === BRAKE, 10_000, { what: "the cgroup's memory.high to be the brake again" });
  const prop = systemctl('show', 'midstop1.scope', '-p', 'MemoryHigh', '--value');
  assert.equal(prop.stdout.trim(), String(BRAKE), "systemd's MemoryHigh is the brake again");
  for (const who of ['agent', 'mcp', 'git']) assert.ok(alive(pids[who]), `${who} (${pids[who]}) lives on`);
  assert.equal(inc.of('midstop1', 'will-stop').length, 1, 'the stop was not started again');
  assert.equal(inc.of('midstop1', 'subtree-stopped').length, 0, 'the old sbd died before it could tell the end');
});
