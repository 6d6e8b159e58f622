// @ts-check
'use strict';
// The freeze watch (issues 6 and 12), with short test thresholds. It tells; it never stops
// anything. Pegged is the agent process spinning, not its builds; silent is reachable with MCP
// and language servers running, and told apart from missing; a heartbeat renewed by `touch` is
// seen at once; under a calm slice an idle agent is not read at all (freeze/calm.ts).
const { test, before, after } = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { labOnly, waitFor } = require('./helpers');
const { parseStat } = require(path.join(__dirname, '../../../dist/proc/stat.js'));
const { spawnSync } = require('node:child_process');
const { startSbd, incidentCollector, runSession, stopSessions, sbctl, systemctl, SLICE_DIR } = require('./sbd-helpers');

// peggedCpuShare stays at its default (0.75); the windows are short. checkS 10: a renewal seen
// only by the timer comes up to 10 s late, one seen by inotify at once.
const FREEZE = { checkS: 10, peggedForS: 30, missingAfterS: 4, silentAfterS: 20, reminderS: 3600 };
/** Python for an agent stand-in: named "agent" (a real one has its own program name). */
const AGENT = 'import ctypes, os, subprocess, sys, time\nctypes.CDLL(None).prctl(15, b"agent", 0, 0, 0)\n';
const BUSY_S = 60; // the build runs twice the pegged window (a 6-minute build under 5 minutes)

/** @type {any} */
let inc;
before(async () => {
  if (labOnly.skip) return;
  await startSbd({ freeze: FREEZE });
  inc = await incidentCollector();
});
after(() => inc?.close());

/**
 * Session NAME running the agent stand-in PROGRAM (python after AGENT); resolves once it printed
 * "ready" (sbctl run starts slowly on a loaded host: no time-out counts from before that).
 */
async function session(t, name, opts, program) {
  const s = runSession(name, opts, ['python3', '-c', AGENT + program]);
  t.after(() => {
    stopSessions(name);
    s.child.kill(); // forwarded to the agent, should its scope not exist yet
  });
  await waitFor(() => s.output().includes('ready'), 120_000, { what: `${name} to start` });
  return { ...s, readyAtMs: Date.now() };
}

/** The first incident of TYPE for SESSION received after SINCE. */
const incidentAfter = (name, type, sinceMs, timeoutMs) =>
  waitFor(() => inc.of(name, type).find((i) => i.receivedAtMs >= sinceMs), timeoutMs, { what: `incident ${type} of ${name}` });

/** A fresh directory's path for a heartbeat file. */
const beatPath = () => path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'sb-beat-')), 'beat');

test('a build spinning under a waiting agent is not pegged; an agent spinning itself is, once, and recovers', labOnly, async (t) => {
  const beat = beatPath();
  fs.writeFileSync(beat, 'working\n');
  // build1: the agent renews its heartbeat, starts a CPU-bound build a check later and waits on
  // it (as an agent blocked on a tool call does): a busy cgroup, an idle agent.
  const waiting = `os.utime(${JSON.stringify(beat)})\nprint("ready", flush=True)\ntime.sleep(${FREEZE.checkS + 1})\nsubprocess.run([sys.executable, "-c", "import time\\nt = time.monotonic()\\nwhile time.monotonic() - t < ${BUSY_S}: pass"])\nprint("build done", flush=True)\ntime.sleep(600)\n`;
  // spin1: the agent itself spins, without a heartbeat, then calms down
  const spinning = 'print("ready", flush=True)\nt = time.monotonic()\nwhile time.monotonic() - t < 50: pass\ntime.sleep(600)\n';
  const [build, spin] = await Promise.all([session(t, 'build1', ['--heartbeat', beat], waiting), session(t, 'spin1', [], spinning)]);

  const pegged = await incidentAfter('spin1', 'pegged', 0, 90_000);
  await waitFor(() => build.output().includes('build done'), (BUSY_S + 60) * 1000, { what: 'the build to end' });
  assert.deepEqual(inc.of('build1', 'pegged').map((i) => i.message), [], 'a build is not a frozen agent');
  await incidentAfter('spin1', 'recovered', spin.readyAtMs, 60_000);
  assert.equal(inc.of('spin1', 'pegged').length, 1, 'told once for the incident');
  assert.match(pegged.message, /^session spin1 is pegged: its agent \(agent, pid \d+\) has spun at \d+ % of a core for \d+ s without writing its heartbeat \(it has no heartbeat file\); agent CPU \d+\.\d min in all; nothing open\. What to do: /);
  assert.equal(typeof pegged.agentPid, 'number');
  assert.ok(inc.incidents.every((i) => i.type !== 'will-stop' && i.type !== 'subtree-stopped'), 'it never stops anything');
});

test('an agent that claims work beside MCP and language servers and stops writing is silent; an idle one is missing', labOnly, async (t) => {
  const working = beatPath();
  const idle = beatPath();
  // The agent starts its servers (their arguments carry a token that must never be told), then
  // writes its heartbeat once and stops.
  const servers = `for name in ("mcp-server-filesystem", "pyright-langserver"):\n    subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)", name, "--token=sekrit-123"])\nopen(${JSON.stringify(working)}, "w").write("working\\n")\nprint("ready", flush=True)\ntime.sleep(600)\n`;
  const idler = `open(${JSON.stringify(idle)}, "w").write("idle\\n")\nprint("ready", flush=True)\ntime.sleep(600)\n`;
  await Promise.all([session(t, 'mcp1', ['--heartbeat', working], servers), session(t, 'idle1', ['--heartbeat', idle], idler)]);

  const silent = await incidentAfter('mcp1', 'silent', 0, 60_000);
  assert.deepEqual(silent.open, ['silent'], 'silent takes the place of missing');
  assert.match(silent.message, /^session mcp1 is silent: its agent \(agent, pid \d+\) claims to be working but has not written its heartbeat for \d+ s; agent CPU [\d.]+ min in all; nothing open \(1 MCP server and 1 language server not counted\)\. What to do: read (its|the) .+; interrupt it .+kill -INT \d+\); stop the session only with a handoff .+systemctl --user stop mcp1\.scope\)\.$/);
  assert.ok(silent.heartbeatAgeS >= FREEZE.silentAfterS, `heartbeat age told: ${silent.heartbeatAgeS}`);
  assert.doesNotMatch(JSON.stringify(inc.of('mcp1')), /sekrit|--token/, 'never command-line arguments');
  const missing = await incidentAfter('idle1', 'missing', 0, 30_000);
  assert.match(missing.message, /^session idle1 is missing: its agent \(agent, pid \d+\) is alive but has not renewed its heartbeat for \d+ s;/);
  await waitFor(() => Date.now() - silent.receivedAtMs > 2 * FREEZE.checkS * 1000, 60_000);
  assert.deepEqual(inc.of('idle1', 'silent'), [], 'not claiming work: missing, never silent');
});

/**
 * Session NAME whose agent claims work in its heartbeat, touches it once, waits for the test's go
 * (the file's path + ".go"), then renews it by `touch` every second. Until the agent is ready the
 * test renews the file itself: sbctl run starts in seconds on a loaded host, and a heartbeat
 * older than missingAfterS when sbd first looked was told missing, then recovered at the agent's
 * touch, then missing again after the test's start (CI, guest 41: missing told twice).
 */
async function touchingSession(t, name) {
  const beat = beatPath();
  fs.writeFileSync(beat, 'working\n');
  const go = `${beat}.go`;
  const agent = `f = ${JSON.stringify(beat)}\nsubprocess.run(["touch", f])\nprint("ready", flush=True)\nwhile not os.path.exists(${JSON.stringify(go)}): time.sleep(0.1)\nwhile True:\n    subprocess.run(["touch", f]); time.sleep(1)\n`;
  const fresh = setInterval(() => fs.utimesSync(beat, new Date(), new Date()), 1000);
  try {
    return { beat, go, s: await session(t, name, ['--heartbeat', beat], agent) };
  } finally {
    clearInterval(fresh);
  }
}

test('a heartbeat renewed by `touch` is seen at once, not at the next check', labOnly, async (t) => {
  const { beat, go, s } = await touchingSession(t, 'touch1');
  const missing = await incidentAfter('touch1', 'missing', s.readyAtMs, 40_000);
  // the missing came at a check: the next one is checkS away
  await new Promise((r) => setTimeout(r, 300));
  const goAtMs = Date.now();
  fs.writeFileSync(go, '');
  const recovered = await incidentAfter('touch1', 'recovered', goAtMs, 30_000).catch((err) => {
    throw new Error(`${err.message}\n${touchDiagnosis('touch1', beat, s.output(), goAtMs)}`);
  });
  const tookMs = recovered.receivedAtMs - goAtMs;
  assert.ok(tookMs < FREEZE.checkS * 500, `recovered ${tookMs} ms after the go (the next check was ${FREEZE.checkS * 1000 - (goAtMs - missing.receivedAtMs)} ms away)`);
});

test('sbd killed after telling missing, the heartbeat renewed while it is down: the next sbd tells the recovery, and not missing again', labOnly, async (t) => {
  const { beat, go, s } = await touchingSession(t, 'touch2');
  await incidentAfter('touch2', 'missing', s.readyAtMs, 40_000);
  const before = Number(systemctl('show', '-P', 'MainPID', 'sbd.service').stdout.trim());
  // SIGKILL: no orderly exit writes anything; Restart=on-failure starts the next sbd 2 s later
  const killed = systemctl('kill', '-s', 'KILL', 'sbd.service');
  assert.equal(killed.status, 0, `systemctl --user kill: ${killed.stderr}`);
  const killedAtMs = Date.now();
  fs.writeFileSync(go, ''); // renewed from now on, while sbd is down and starting
  await waitFor(() => {
    const pid = Number(systemctl('show', '-P', 'MainPID', 'sbd.service').stdout.trim());
    return pid !== 0 && pid !== before && sbctl('status', '--json').status === 0;
  }, 120_000, { what: 'the next sbd to answer' });
  const recovered = await incidentAfter('touch2', 'recovered', killedAtMs, 60_000).catch((err) => {
    throw new Error(`${err.message}\n${touchDiagnosis('touch2', beat, s.output(), killedAtMs)}`);
  });
  assert.match(recovered.message, /^session touch2 recovered \(was missing\)$/);
  const missing = inc.of('touch2', 'missing');
  assert.equal(missing.length, 1, `missing told once, by the sbd that was killed (pid ${before}); told ${missing.length} times, by ${missing.map((i) => i.sender).join(', ')}\n${touchDiagnosis('touch2', beat, s.output(), killedAtMs)}`);
});

/**
 * What was seen when a recovery did not come: the heartbeat's mtime against the wall clock, the
 * agent's output, every incident of the session with the wall and monotonic times it reached
 * this process, status's row (sbd's heartbeat age), and sbd's last journal lines.
 */
function touchDiagnosis(name, beat, output, goAtMs) {
  let mtime = 'unreadable';
  try {
    mtime = `${((Date.now() - fs.statSync(beat).mtimeMs) / 1000).toFixed(1)} s old`;
  } catch (err) {
    mtime = `unreadable (${/** @type {Error} */ (err).message})`;
  }
  const told = inc.of(name).map((i) => `${i.type} from ${i.sender} at go${i.receivedAtMs - goAtMs >= 0 ? '+' : ''}${i.receivedAtMs - goAtMs} ms (mono ${Math.round(i.receivedMonoMs)})`);
  const status = sbctl('status', '--json');
  let row = `sbctl status --json: exit ${status.status}`;
  try {
    row = JSON.stringify(JSON.parse(status.stdout).sessions.find((/** @type {any} */ r) => r.name === name) ?? null);
  } catch {
    /* status failed: its exit code says so */
  }
  const journal = spawnSync('journalctl', ['--user', '-u', 'sbd.service', '--no-pager', '-o', 'short-monotonic', '-n', '30'], { encoding: 'utf8' }).stdout;
  return `heartbeat ${mtime}; wall clock now go+${Date.now() - goAtMs} ms; agent output: ${JSON.stringify(output.slice(-300))}\nincidents of ${name}: ${told.join(', ') || 'none'}\nstatus row: ${row}\nsbd's journal:\n${journal}`;
}

/** utime + stime of PID, in clock ticks (100 a second on Debian), by sbd's own parser. */
const cpuTicks = (pid) => parseStat(fs.readFileSync(`/proc/${pid}/stat`, 'utf8'), `/proc/${pid}/stat`).cpuTicks;

test('under a calm slice an idle agent is not read (sbd holds no fd on its stat); once it spins, the slice is busy and it is told pegged', labOnly, async (t) => {
  // A share a spinning agent reaches on a host that runs two emulated guests at once (each vCPU
  // then gets about half a host core): the calm bound and pegged both use it.
  const SHARE = 0.3;
  await startSbd({ freeze: { ...FREEZE, peggedCpuShare: SHARE } });
  const sbdPid = Number(systemctl('show', '-P', 'MainPID', 'sbd.service').stdout.trim());
  // calm0 keeps the slice's reading going from round to round, so that calm1 is never a first look
  await session(t, 'calm0', [], 'print("ready", flush=True)\ntime.sleep(600)\n');
  await new Promise((r) => setTimeout(r, 2 * FREEZE.checkS * 1000));
  const CALM_S = 3 * FREEZE.checkS;
  const SPIN_S = 90; // the slice busy from the round after the spin began, pegged 30 s later
  const s = await session(t, 'calm1', [], `print("ready", os.getpid(), flush=True)\ntime.sleep(${CALM_S})\nt = time.monotonic()\nwhile time.monotonic() - t < ${SPIN_S}: pass\ntime.sleep(600)\n`);
  const agentPid = Number(/ready (\d+)/.exec(s.output())?.[1]);
  const holdsStat = () => fs.readdirSync(`/proc/${sbdPid}/fd`).some((fd) => {
    try {
      return fs.readlinkSync(`/proc/${sbdPid}/fd/${fd}`) === `/proc/${agentPid}/stat`;
    } catch {
      return false; // closed meanwhile
    }
  });
  // the agent sleeps: every round over it (two at least) finds the slice calm and leaves it unread
  let looks = 0;
  while (Date.now() < s.readyAtMs + (CALM_S - 2) * 1000) {
    assert.equal(holdsStat(), false, `sbd (pid ${sbdPid}) holds the stat of calm1's sleeping agent (pid ${agentPid}): it was read under a calm slice`);
    looks++;
    await new Promise((r) => setTimeout(r, 1000));
  }
  assert.ok(looks >= 2 * FREEZE.checkS, `looked ${looks} times`);
  const sliceUs = () => Number(/^usage_usec (\d+)/m.exec(fs.readFileSync(path.join(SLICE_DIR, 'cpu.stat'), 'utf8'))?.[1]);
  const spinFrom = { atMs: Date.now(), ticks: cpuTicks(agentPid), sliceUs: sliceUs() };
  const pegged = await incidentAfter('calm1', 'pegged', s.readyAtMs, (CALM_S + SPIN_S + 30) * 1000).catch((err) => {
    const share = (cpuTicks(agentPid) * 10 - spinFrom.ticks * 10) / (Date.now() - spinFrom.atMs);
    const slice = (sliceUs() - spinFrom.sliceUs) / 1000 / (Date.now() - spinFrom.atMs);
    throw new Error(`${err.message}; since its spin began the agent had ${(share * 100).toFixed(0)} % of a core and the slice ${(slice * 100).toFixed(0)} % (pegged from ${SHARE * 100} %); sbd holds its stat: ${holdsStat()}`);
  });
  assert.equal(pegged.agentPid, agentPid);
  assert.equal(holdsStat(), true, 'read once the slice was busy');
  assert.deepEqual(inc.of('calm0', 'pegged'), [], 'the sleeping neighbour is not pegged');
});
