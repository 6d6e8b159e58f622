'use strict';
// Loaded into sbd by `node --require` (bench/guest/storm.sh, SBD_TIMING=1): times sbd's hot
// functions by wrapping them, without a profiler. The guest's CPU profiles misattribute small
// functions under TCG (RESULTS, session 13); this counts each call's wall time on the monotonic
// clock and the process's CPU time (getrusage) around it, per name, and appends the running totals to
// $SBD_TIMING_OUT (one JSON line) every 2 s and at exit. Nothing in src/ knows of it.
const fs = require('node:fs');
const path = require('node:path');
const { performance } = require('node:perf_hooks');

const dist = path.join(__dirname, '..', '..', 'dist');
const out = process.env.SBD_TIMING_OUT || '/tmp/sbd-timing.json';
const totals = new Map(); // name -> { calls, wallMs, cpuMs }; a wrapped call inside another counts in both

function timed(name, fn) {
  return function wrapped(...args) {
    const t0 = performance.now();
    const c0 = process.cpuUsage();
    try {
      return fn.apply(this, args);
    } finally {
      const c = process.cpuUsage(c0);
      const t = totals.get(name) ?? { calls: 0, wallMs: 0, cpuMs: 0 };
      t.calls++;
      t.wallMs += performance.now() - t0;
      t.cpuMs += (c.user + c.system) / 1000;
      totals.set(name, t);
    }
  };
}

/** Wrap `owner[key]` (a module's export or a prototype's method) under `name`. */
function wrap(owner, key, name) {
  if (typeof owner?.[key] !== 'function') return process.stderr.write(`sbd-timing: no ${name}\n`);
  owner[key] = timed(name, owner[key]);
}

const mod = (p) => require(path.join(dist, p));
const { Incidents } = mod('daemon/incidents.js');
wrap(Incidents.prototype, 'tell', 'incident.tell');
// Each listener of the incidents, by the order service.ts adds them.
const LISTENERS = ['incident.metrics', 'incident.signal', 'incident.inbox', 'incident.notify'];
const onIncident = Incidents.prototype.onIncident;
Incidents.prototype.onIncident = function (l) {
  const n = (this.__timedListeners = (this.__timedListeners ?? 0) + 1);
  return onIncident.call(this, timed(LISTENERS[n - 1] ?? `incident.listener${n}`, l));
};
wrap(mod('native.js'), 'journalSend', 'journal.send');
wrap(mod('journal/encode.js'), 'encodeEntry', 'journal.encode');
wrap(mod('journal/incident-entry.js'), 'incidentEntry', 'journal.entry');
wrap(mod('inbox/store.js').InboxWriter.prototype, 'append', 'inbox.append');
const feed = mod('stall/feed.js').SessionFeed.prototype;
// Each feed's wakes and windows, in memory, written at exit beside the totals (-windows.jsonl): why
// a session's verdict came when it did (bench/storm-windows.js). A push per sample, no I/O.
const windows = [];
const wakeOf = feed.wake;
feed.wake = function (why) {
  if (!this.sampling) windows.push({ t: Date.now(), u: path.basename(this.cgroupDir), wake: why });
  return wakeOf.call(this, why);
};
// SBD_TIMING_PSI=1: each window's record also carries the session's running totals (µs) of memory
// `some` and `full` stall and of cpu `some` (tasks runnable, waiting for a CPU), and its
// memory.current, read by the wrapper at the sample's end from files it holds open (four preads a
// sample more, none by sbd's code): what a window of no full stall was (bench/storm-psi.js).
const psiFiles = process.env.SBD_TIMING_PSI ? new Map() : undefined;
const psiBuf = Buffer.alloc(512);
function psiTotals(dir) {
  let fds = psiFiles.get(dir);
  if (fds === undefined) {
    fds = {};
    for (const f of ['memory.pressure', 'cpu.pressure', 'memory.current']) {
      try { fds[f] = fs.openSync(`${dir}/${f}`, 'r'); } catch { /* gone, or no such file */ }
    }
    psiFiles.set(dir, fds);
  }
  const text = (f) => {
    if (fds[f] === undefined) return '';
    try { return psiBuf.toString('latin1', 0, fs.readSync(fds[f], psiBuf, 0, psiBuf.length, 0)); } catch { return ''; }
  };
  const total = (t, line) => { const m = new RegExp(`^${line} .*total=(\\d+)`, 'm').exec(t); return m ? Number(m[1]) : undefined; };
  const mem = text('memory.pressure');
  const cur = /^\d+/.exec(text('memory.current'));
  return { memSomeUs: total(mem, 'some'), memFullUs: total(mem, 'full'), cpuSomeUs: total(text('cpu.pressure'), 'some'), currentB: cur ? Number(cur[0]) : undefined };
}
// The window's end sample's page cache ((file - shmem) / current): what the rest of a window under
// the anon fuse was made of, page cache or (1 - anon - pc) kernel memory (bench/storm-windows.js).
// The sample is the one the detector's step was given (a clear window's feed drops its state).
function memoryShares(s) {
  return s === undefined || !(s.currentBytes > 0) ? {} : { pc: (s.fileBytes - s.shmemBytes) / s.currentBytes };
}
let stepSample;
const detectorModule = mod('stall/detector.js');
const stepOf = detectorModule.step;
detectorModule.step = function (state, sample, ...rest) {
  stepSample = sample;
  return stepOf.call(this, state, sample, ...rest);
};
const sampleOf = feed.sample;
feed.sample = function () {
  const timerMs = this.timerMs;
  stepSample = undefined;
  const v = sampleOf.call(this);
  if (v !== undefined) windows.push({ t: Date.now(), u: path.basename(this.cgroupDir), timerMs, late: this.lateInARow, ev: v.event, kind: v.window?.kind, ms: v.window?.windowMs, share: v.window?.share, anon: v.window?.anonShare, cpu: v.window?.cpuShare, starved: v.window?.starved, why: v.window?.kind === 'clear' ? v.window.reason : undefined, hot: v.hotWindows, ...memoryShares(stepSample), ...(psiFiles ? psiTotals(this.cgroupDir) : {}) });
  return v;
};
wrap(feed, 'sample', 'feed.sample');
wrap(feed, 'wake', 'feed.wake');
wrap(mod('cgroup/read.js').SampleFiles.prototype, 'read', 'feed.read');
wrap(mod('cgroup/read.js'), 'readMemorySample', 'feed.readByPath');
wrap(mod('cgroup/read.js').SampleFiles, 'open', 'feed.open');
wrap(detectorModule, 'step', 'detector.step');
wrap(mod('daemon/controller.js').BrakeController.prototype, 'onVerdict', 'controller.onVerdict');
wrap(mod('cgroup/slice-count.js').SliceCounts.prototype, 'get', 'sliceCount.get');
wrap(mod('slice/read.js'), 'readSliceSample', 'slice.read');
wrap(mod('daemon/state-file.js'), 'saveState', 'state.save');

const started = performance.now();
const elu0 = performance.eventLoopUtilization();
function dump() {
  const rows = Object.fromEntries([...totals].map(([k, v]) => [k, { calls: v.calls, wallMs: Math.round(v.wallMs), cpuMs: Math.round(v.cpuMs) }]));
  const cpu = process.cpuUsage();
  const elu = performance.eventLoopUtilization(elu0);
  // The kernel's view of sbd's main thread: time on a CPU, and time runnable but waiting for one.
  const [onCpuNs, waitingNs] = fs.readFileSync(`/proc/self/task/${process.pid}/schedstat`, 'utf8').split(' ').map(Number);
  const doc = { atMs: Date.now(), upMs: Math.round(performance.now() - started), cpuMs: Math.round((cpu.user + cpu.system) / 1000), loopActiveMs: Math.round(elu.active), loopIdleMs: Math.round(elu.idle), mainOnCpuMs: Math.round(onCpuNs / 1e6), mainRunnableWaitMs: Math.round(waitingNs / 1e6), rows };
  try {
    fs.appendFileSync(out, `${JSON.stringify(doc)}\n`);
  } catch {
    /* the bench reads what is there */
  }
}
setInterval(dump, 2000).unref();
process.on('exit', dump);
process.on('exit', () => {
  try {
    fs.writeFileSync(out.replace(/\.jsonl?$/, '') + '-windows.jsonl', windows.map((w) => JSON.stringify(w)).join('\n') + '\n');
  } catch {
    /* the bench reads what is there */
  }
});
