// @ts-check
'use strict';
// What sbd's warm-up (src/daemon/warm-up.ts) buys a storm's first windows, on the host (issue 15,
// item 5). Each figure comes from fresh processes: a session's feed (stall/feed.ts SessionFeed,
// its sample files held open, on a fake cgroup in a temporary directory) takes 200 windows as a
// storm's feed does, from a wake through three hot onset windows to a verdict, whose incident is
// encoded as its journal entry and its Incident signal (what incidents.tell's writer and signal
// do, nothing sent); µs per window, the memory.pressure rewrite between windows not counted.
//   cold       a new process, as sbd meets its first storm without the warm-up (the baseline);
//   warmed-up  after startWarmUp's rounds, run to their end;
//   aged       the same, then 10 full GCs (node --expose-gc): V8 flushes a function's bytecode
//              after --bytecode-old-age (5) GCs in which it did not run, as in hours of idling;
//   warm       after 20,000 windows (the least the code costs).
//   node bench/warm-up.js [--runs 5] [--dist DIR (a build's dist: this checkout's by default)]
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { spawnSync } = require('node:child_process');
const { spread } = require('./lib');

const args = process.argv.slice(2);
const RUNS = Number(args[args.indexOf('--runs') + 1] || 5);
const DIST = process.env.WARM_UP_DIST ?? (args.includes('--dist') ? path.resolve(args[args.indexOf('--dist') + 1]) : path.join(__dirname, '..', 'dist'));
const FIXTURE = path.join(__dirname, '..', 'test', 'fixtures', 'cgroup', 'sessions.slice', 'wedged.scope');
const WINDOWS = 200;

/** A fake session cgroup in a temporary directory: the fixture's files, cpu.pressure added. */
function fakeCgroup() {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sb-warm-up-'));
  for (const f of fs.readdirSync(FIXTURE)) fs.copyFileSync(path.join(FIXTURE, f), path.join(dir, f));
  fs.writeFileSync(path.join(dir, 'cpu.pressure'), 'some avg10=0.00 avg60=0.00 avg300=0.00 total=0\nfull avg10=0.00 avg60=0.00 avg300=0.00 total=0\n');
  return dir;
}

async function child(mode) {
  const dir = fakeCgroup();
  const { SessionFeed } = require(path.join(DIST, 'stall/feed.js'));
  const { initialState } = require(path.join(DIST, 'stall/detector.js'));
  const { detectorSchema } = require(path.join(DIST, 'config/schema.js'));
  const { encodeEntry } = require(path.join(DIST, 'journal/encode.js'));
  const { incidentEntry } = require(path.join(DIST, 'journal/incident-entry.js'));
  const { incidentToBus, INCIDENT_SIGNATURE } = require(path.join(DIST, 'daemon/bus-types.js'));
  const { encodeSignal } = require(path.join(DIST, 'bus-lite/wire.js'));
  const { startWarmUp } = require(path.join(DIST, 'daemon/warm-up.js'));
  const config = detectorSchema.parse({});
  let warmUpMs = 0;
  let verdicts = 0;
  const rssBefore = process.memoryUsage().rss;
  if (mode === 'warmed-up' || mode === 'aged') {
    const r = await startWarmUp({ config, rounds: process.env.WARM_UP_ROUNDS ? Number(process.env.WARM_UP_ROUNDS) : undefined, dir: fakeCgroup(), // as sbd reads its own cgroup's files
      now: () => performance.now(), later: setImmediate }).done;
    warmUpMs = r.busyMs;
    verdicts = r.verdicts;
    if (mode === 'aged') for (let i = 0; i < 10; i++) global.gc?.();
    // a storm comes later: the optimising compiler's jobs (a thread of their own) are done by then
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
  const rssGrowth = process.memoryUsage().rss - rssBefore; // what the warm-up (or nothing, cold) added
  let clock = 1_000_000;
  let fullUs = 0;
  let bytes = 0;
  const pressure = path.join(dir, 'memory.pressure');
  const feed = new SessionFeed(dir, {
    config, unitsInSlice: () => 1, now: () => clock, log: () => undefined, onGone: () => { throw new Error('the fake cgroup is there'); },
    armTrigger: () => ({ close() {}, unref() {} }),
    onVerdict: (v) => {
      if (v.event !== 'standing-still') return;
      const i = { type: 'standing-still', unit: 'bench.scope', session: 'bench', atMs: Date.now(), message: `standing still against its own brake (${v.explain})`, observeOnly: false, share: v.window?.share, anonShare: v.window?.anonShare, evidence: v.window?.evidence, deadlineS: 600 };
      bytes += encodeEntry(incidentEntry(i, 4)).length;
      bytes += encodeSignal(1, { path: '/dev/sessionbrake/Manager1', interface: 'dev.sessionbrake.Manager1', member: 'Incident', signature: INCIDENT_SIGNATURE, body: incidentToBus(i) }).length;
    },
  });
  feed.start();
  const windows = mode === 'warm' ? 20_000 + WINDOWS : WINDOWS;
  let ns = 0n;
  feed.wake('bench');
  for (let k = 0; k < windows; k++) {
    clock += 500;
    fullUs += 400_000; // 0.8 of each 0.5 s window: hot
    fs.writeFileSync(pressure, `some avg10=50.00 avg60=10.00 avg300=2.00 total=${fullUs}\nfull avg10=50.00 avg60=10.00 avg300=2.00 total=${fullUs}\n`);
    if (feed.state.deadline !== undefined) feed.setState(initialState()); // the next episode
    const t0 = process.hrtime.bigint();
    feed.sample();
    if (k >= windows - WINDOWS) ns += process.hrtime.bigint() - t0;
  }
  feed.stop();
  fs.rmSync(dir, { recursive: true, force: true });
  process.stdout.write(JSON.stringify({ us: Number(ns) / WINDOWS / 1000, warmUpMs, verdicts, rssMiB: rssGrowth / 2 ** 20, bytes }));
}

if (process.env.WARM_UP_CHILD) {
  child(process.env.WARM_UP_CHILD).catch((err) => {
    console.error(err);
    process.exit(1);
  });
} else {
  const modes = ['cold', 'warmed-up', 'aged', 'warm'];
  const one = (mode) => {
    const r = spawnSync(process.execPath, ['--expose-gc', __filename], { env: { ...process.env, WARM_UP_CHILD: mode, WARM_UP_DIST: DIST }, encoding: 'utf8' });
    if (r.status !== 0) throw new Error(`the child (${mode}) failed: ${r.stderr.trim().split('\n').slice(-3).join(' ')}`);
    return JSON.parse(r.stdout);
  };
  // interleaved: a process of each mode in turn, so that the machine's noise falls on all
  const rows = Object.fromEntries(modes.map((m) => [m, []]));
  for (let r = 0; r < RUNS; r++) for (const m of modes) rows[m].push(one(m));
  const f = (s) => `${s.median.toFixed(1)} µs (${s.min.toFixed(1)}–${s.max.toFixed(1)})`;
  const cold = spread(rows.cold.map((x) => x.us));
  if (!cold) throw new Error('no runs');
  console.log(`A feed's first ${WINDOWS} windows (sample, detector, a verdict's incident encoded every fourth): µs per window, median (min–max) of ${RUNS} fresh processes each, node ${process.version}`);
  console.log('| process | µs per window | / cold | the warm-up\'s own time | RSS grown before the windows |');
  console.log('| --- | --- | --- | --- | --- |');
  for (const m of modes) {
    const s = spread(rows[m].map((x) => x.us));
    const w = spread(rows[m].map((x) => x.warmUpMs));
    const rss = spread(rows[m].map((x) => x.rssMiB));
    if (!s || !w || !rss) throw new Error('no runs');
    console.log(`| ${m} | ${f(s)} | ${(s.median / cold.median).toFixed(2)}× | ${w.median > 0 ? `${w.median} ms (${w.min}–${w.max})` : '–'} | ${rss.median.toFixed(1)} MiB |`);
  }
}
