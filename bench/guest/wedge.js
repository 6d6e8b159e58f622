// @ts-check
'use strict';
// In the guest, as tester: one wedge. `sbctl run` starts the stand-in agent of the guest tests
// (test/vm/guest/fixtures/agent.py: an MCP server, git, and a build whose child wants 400 MiB)
// in a session with a 64 MiB brake and no swap. Times, in ms since the epoch:
//   onset    memory.current first reached the brake (read every 20 ms)
//   verdict  sbd's standing-still incident (from its journal; none when sbd is not running)
//   acted    the first of the session's processes to die (read every 100 ms): whoever stopped
//            it, sbd or systemd-oomd
//   stall    where the stall that holds the verdict began, as the kernel counted it (the scope's
//            memory.pressure full total, read with memory.current; bench/stall-onset.js)
// and which processes were alive and which gone when it settled (or after TIMEOUT_S).
//   node wedge.js NAME [TIMEOUT_S]   prints: NAME onset verdict acted alive gone stall (tab-separated)
const fs = require('node:fs');
const { spawn, spawnSync } = require('node:child_process');
const readline = require('node:readline');
const { sbdIncidents } = require('./journal-incidents.js');
const { stallOnset } = require('../stall-onset.js');

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const BRAKE = 64 * 2 ** 20;

/** True while the process exists and is not a zombie. */
function alive(pid) {
  try {
    return !/^\d+ \(.*\) Z/.test(fs.readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return false;
  }
}

/** sbd's incidents about this unit in the last minutes, from its journal. */
function incidents(unit) {
  return sbdIncidents(['--since', '-5min']).filter((i) => i.unit === unit);
}

async function main() {
  const name = process.argv[2];
  const timeoutMs = Number(process.argv[3] ?? 90) * 1000;
  const unit = `${name}.scope`;
  const run = spawn('node', ['/mnt/proj/dist/cli/main.js', 'run', '-n', name, '--memory-high', '64M', '--swap-max', '0', '--', 'python3', '/mnt/proj/test/vm/guest/fixtures/agent.py', '400', '300'], { stdio: ['ignore', 'pipe', 'inherit'] });
  const first = await new Promise((resolve) => readline.createInterface({ input: run.stdout }).once('line', resolve));
  /** @type {Record<string, number>} */
  const pids = JSON.parse(/** @type {string} */ (first));
  const dir = `/sys/fs/cgroup/user.slice/user-1000.slice/user@1000.service/sessions.slice/${unit}`;
  /** The scope's full-stall total as read: [{ atMs, fullUs }]. */
  const pressure = [];
  const readPressure = () => {
    try {
      const m = /^full avg10=\S+ avg60=\S+ avg300=\S+ total=(\d+)$/m.exec(fs.readFileSync(`${dir}/memory.pressure`, 'utf8'));
      if (m) pressure.push({ atMs: Date.now(), fullUs: Number(m[1]) });
    } catch { /* not yet, or gone */ }
  };
  let onset = 0;
  while (!onset) {
    try {
      if (Number(fs.readFileSync(`${dir}/memory.current`, 'utf8')) >= BRAKE) onset = Date.now();
    } catch { /* not yet */ }
    readPressure();
    await sleep(20);
  }
  let verdict = 0;
  let acted = 0;
  let lastJournal = 0;
  const end = onset + timeoutMs;
  while (Date.now() < end && !(acted && Date.now() > acted + 2000)) {
    // on past the verdict, so that the stall's run reaches it (bench/stall-onset.js)
    if (!verdict || Date.now() < verdict + 500) readPressure();
    if (!acted && Object.values(pids).some((p) => !alive(p))) acted = Date.now();
    if (!verdict && Date.now() - lastJournal >= 1000) {
      lastJournal = Date.now();
      verdict = incidents(unit).find((i) => i.event === 'standing-still')?.atMs ?? 0;
    }
    await sleep(100);
  }
  if (!verdict) verdict = incidents(unit).find((i) => i.event === 'standing-still')?.atMs ?? 0;
  const names = Object.keys(pids);
  const up = names.filter((n) => alive(pids[n]));
  const gone = names.filter((n) => !up.includes(n));
  const stall = verdict ? stallOnset(pressure, verdict) : undefined;
  // the readings themselves, for a stall onset that is not found (bench/stall-onset.js)
  try {
    if (process.env.LAB_OUT) fs.writeFileSync(`${process.env.LAB_OUT}/pressure-${name}.json`, JSON.stringify({ onset, verdict, pressure }));
  } catch (err) {
    console.error(`wedge.js: the pressure readings not kept: ${/** @type {Error} */ (err).message}`);
  }
  console.log([name, onset, verdict || '', acted || '', up.join(',') || '-', gone.join(',') || '-', stall ?? ''].join('\t'));
  spawnSync('systemctl', ['--user', 'set-property', '--runtime', unit, 'MemoryHigh=infinity']);
  spawnSync('systemctl', ['--user', 'stop', unit]);
  run.kill();
}
main().catch((e) => {
  console.error(e);
  process.exit(1);
});
