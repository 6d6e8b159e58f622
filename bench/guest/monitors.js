// @ts-check
'use strict';
// In the guest, as tester (issue 13's benchmark), with sbd installed and running:
//  1. latency: a tail monitor on a file; LINES lines appended one at a time, each waited for.
//     Per line: the time from the append to sbd's notice in the session's inbox file, and, as the
//     baseline measured on the same append, to this process's own inotify event on the log file
//     (the floor any watcher of the file has). Rows: $OUT/monitor-latency.tsv.
//  2. idle: sbd's wakeups (its main thread's voluntary + involuntary context switches) and CPU over
//     WINDOW_S s with no monitor, then with 100 tail monitors on 100 idle files, side by side over
//     the same window with a loop that polls the same 100 files every second (stat, and a read of
//     what grew). Rows: $OUT/monitors.tsv.
// Usage: node monitors.js OUT_DIR (env LINES=1000 WINDOW_S=60 SETTLE_S=100 TAILS=100)
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { spawn, spawnSync } = require('node:child_process');
const dbus = require('/mnt/proj/node_modules/dbus-next');
const { FileWatch } = require('/mnt/proj/dist/native.js');
const { figuresToBus } = require('/mnt/proj/dist/daemon/bus-types.js');
const { callService } = require('/mnt/proj/dist/cli/status.js');
const { SERVICE_INTERFACE } = require('/mnt/proj/dist/daemon/bus-name.js');
const { inboxDir } = require('/mnt/proj/dist/inbox/store.js');

const OUT = process.argv[2] ?? '.';
const LINES = Number(process.env.LINES ?? 1000);
const WINDOW_S = Number(process.env.WINDOW_S ?? 60);
const SETTLE_S = Number(process.env.SETTLE_S ?? 100);
const TAILS = Number(process.env.TAILS ?? 100);
const SESSION = 'bench-mon';
const SBCTL = '/mnt/proj/dist/cli/main.js';
const dir = path.join(os.homedir(), 'bench-monitors');
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const sh = (cmd, ...args) => {
  const r = spawnSync(cmd, args, { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`${cmd} ${args.join(' ')}: ${r.stderr}`);
  return r.stdout.trim();
};

/** Context switches of a process's main thread and its CPU seconds (user + system). */
function usage(pid) {
  const status = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
  const n = (k) => Number(new RegExp(`^${k}:\\s+(\\d+)`, 'm').exec(status)?.[1]);
  const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
  const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return { vol: n('voluntary_ctxt_switches'), invol: n('nonvoluntary_ctxt_switches'), cpuS: (Number(f[11]) + Number(f[12])) / 100 };
}
const delta = (a, b) => ({ vol: b.vol - a.vol, invol: b.invol - a.invol, cpuS: Math.round((b.cpuS - a.cpuS) * 100) / 100 });

async function main() {
  fs.rmSync(dir, { recursive: true, force: true });
  fs.mkdirSync(dir, { recursive: true });
  const session = spawn(process.execPath, [SBCTL, 'run', '--name', SESSION, '--', 'sleep', '3600'], { stdio: 'ignore' });
  const bus = dbus.sessionBus({ busAddress: /** @type {string} */ (process.env.DBUS_SESSION_BUS_ADDRESS) });
  const start = async (spec) => {
    const [[answer, id, handle, reason]] = /** @type {any} */ (await callService(bus, SERVICE_INTERFACE, 'StartMonitor', 'sa{sv}', [SESSION, figuresToBus(spec)]));
    if (answer !== 'created') throw new Error(`StartMonitor: ${answer} ${reason}`);
    return { id, handle };
  };
  for (let i = 0; i < 600; i++) {
    const r = spawnSync(process.execPath, [SBCTL, 'status', '--json'], { encoding: 'utf8' });
    if (r.status === 0 && JSON.parse(r.stdout).sessions.some((s) => s.name === SESSION)) break;
    await sleep(200);
  }
  const sbdPid = Number(sh('systemctl', '--user', 'show', '-P', 'MainPID', 'sbd.service'));

  // 1. latency, one line at a time
  const log = path.join(dir, 'latency.log');
  fs.writeFileSync(log, '');
  const inbox = path.join(inboxDir(), `${SESSION}.jsonl`);
  fs.mkdirSync(path.dirname(inbox), { recursive: true });
  fs.closeSync(fs.openSync(inbox, 'a'));
  let inboxOffset = fs.statSync(inbox).size;
  /** @type {Map<string, number>} */
  const told = new Map();
  let logEventAt = 0;
  /** @type {(() => void) | undefined} */
  let wake;
  const watch = new FileWatch((e) => {
    const now = performance.now();
    if (e.path === log) logEventAt ||= now;
    if (e.path === inbox) {
      const size = fs.statSync(inbox).size;
      const fd = fs.openSync(inbox, 'r');
      const buf = Buffer.alloc(size - inboxOffset);
      fs.readSync(fd, buf, 0, buf.length, inboxOffset);
      fs.closeSync(fd);
      const text = buf.toString('utf8');
      const whole = text.lastIndexOf('\n') + 1;
      inboxOffset += Buffer.byteLength(text.slice(0, whole));
      for (const line of text.slice(0, whole).split('\n').filter(Boolean)) {
        for (const l of JSON.parse(line).lines ?? []) told.set(l, now);
      }
    }
    wake?.();
  });
  watch.add(log);
  watch.add(inbox);
  const lat = await start({ type: 'tail', path: log, notifyOn: ['^L'], coalesceSeconds: 0, maxLines: 1, label: 'latency' });
  const rows = ['line\tto_inotify_ms\tto_notice_ms'];
  for (let i = 0; i < LINES; i++) {
    logEventAt = 0;
    const t0 = performance.now();
    fs.appendFileSync(log, `L${i}\n`);
    const deadline = t0 + 30_000;
    while (!told.has(`L${i}`) && performance.now() < deadline) await new Promise((r) => { wake = () => r(undefined); setTimeout(r, 1000); });
    if (!told.has(`L${i}`)) throw new Error(`line L${i}: no notice within 30 s`);
    rows.push(`${i}\t${(logEventAt - t0).toFixed(3)}\t${(/** @type {number} */ (told.get(`L${i}`)) - t0).toFixed(3)}`);
  }
  fs.writeFileSync(path.join(OUT, 'monitor-latency.tsv'), `${rows.join('\n')}\n`);
  watch.close();
  await callService(bus, SERVICE_INTERFACE, 'StopMonitor', 'ss', [SESSION, lat.handle]);

  // 2. idle: sbd with no monitor; then 100 tails beside a loop polling the same files every second
  const idle = ['what\tseconds\tvoluntary\tinvoluntary\tcpu_s\trss_kib'];
  const rss = (pid) => Number(/^VmRSS:\s+(\d+)/m.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1]);
  const measure = async (pids) => {
    const before = pids.map(usage);
    await sleep(WINDOW_S * 1000);
    return pids.map((p, i) => ({ ...delta(before[i], usage(p)), rss: rss(p) }));
  };
  const sbdUp = () => Number(fs.readFileSync('/proc/uptime', 'utf8').split(' ')[0]) - Number(fs.readFileSync(`/proc/${sbdPid}/stat`, 'utf8').split(') ')[1].split(' ')[19]) / 100;
  // V8's memory reducer runs about 85 s after node starts: count from SETTLE_S after sbd's start
  await sleep(Math.max(0, SETTLE_S - sbdUp()) * 1000);
  const [none] = await measure([sbdPid]);
  idle.push(`sbd, no monitor\t${WINDOW_S}\t${none.vol}\t${none.invol}\t${none.cpuS}\t${none.rss}`);
  const files = [];
  for (let i = 0; i < TAILS; i++) {
    const f = path.join(dir, `idle-${i}.log`);
    fs.writeFileSync(f, 'started\n');
    files.push(f);
    await start({ type: 'tail', path: f, notifyOn: ['ERROR'], label: `idle-${i}` });
  }
  const loop = spawn(process.execPath, [path.join(__dirname, 'poll-loop.js'), ...files], { stdio: 'ignore' });
  await sleep(SETTLE_S * 1000); // the loop past its own memory reducer too
  const [tails, polled] = await measure([sbdPid, /** @type {number} */ (loop.pid)]);
  idle.push(`sbd, ${TAILS} tail monitors\t${WINDOW_S}\t${tails.vol}\t${tails.invol}\t${tails.cpuS}\t${tails.rss}`);
  idle.push(`loop polling ${TAILS} files every 1 s\t${WINDOW_S}\t${polled.vol}\t${polled.invol}\t${polled.cpuS}\t${polled.rss}`);
  fs.writeFileSync(path.join(OUT, 'monitors.tsv'), `${idle.join('\n')}\n`);
  loop.kill();
  session.kill();
  bus.disconnect();
}

main().catch((e) => { console.error(e); process.exit(1); });
