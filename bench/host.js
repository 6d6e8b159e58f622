#!/usr/bin/env node
// @ts-check
'use strict';
// Host benchmarks (issue 7, item 4): each piece of sbd's hot path against the simplest correct
// baseline written here, measured side by side in the same run. Prints a Markdown table.
//   npm run build && node bench/host.js
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { measure, row } = require('./lib.js');
const { step, initialState } = require('../dist/stall/detector.js');
const { parseConfig } = require('../dist/config/load.js');
const { chooseVictim } = require('../dist/victim/choose.js');
const { environValue } = require('../dist/proc/stat.js');
const { parseFlatKeyed, parsePressure, parseLimit } = require('../dist/cgroup/parse.js');
const { parseStat } = require('../dist/proc/stat.js');
const { loadTrace, samplesOf } = require('../test/support/traces.js');
const { InboxWriter, appendNotice } = require('../dist/inbox/store.js');

const cfg = parseConfig({}, 'bench').detector;
const out = [];

// 1. Detector steps: the wedged trace replayed, against a baseline that keeps the whole history
//    and recomputes the share from it each step (what a naive sampler does).
const samples = samplesOf(loadTrace('wedged'), 'wedged.scope', 250);
const detector = measure(() => {
  let s = initialState();
  for (const x of samples) s = step(s, x, cfg)[0];
  return samples.length;
});
const naive = measure(() => {
  const hist = [];
  let hot = 0;
  for (const x of samples) {
    hist.push(x);
    const prev = hist.filter((h) => x.atMs - h.atMs >= cfg.windowS * 1000).pop();
    if (prev) hot = (x.pressureFullUs - prev.pressureFullUs) / ((x.atMs - prev.atMs) * 1000) >= cfg.tripShare ? hot + 1 : 0;
  }
  return samples.length + hot * 0;
});
out.push(row('detector steps (wedged trace, 250 ms samples)', detector, naive));

// 2. Victim choice over generated 5,000-process trees, against a baseline that walks the parent
//    chain of every process to find its subtree root (quadratic in depth).
function tree(n, seed) {
  let x = seed;
  const rnd = () => ((x = (x * 1103515245 + 12345) % 2 ** 31) / 2 ** 31);
  const comms = ['make', 'cc1plus', 'node', 'git', 'python3', 'bash', 'rg'];
  const procs = [{ pid: 2, ppid: 1, comm: 'claude', rssBytes: 300e6, argv: ['claude'] }];
  for (let i = 3; i < n + 2; i++) {
    const ppid = 2 + Math.floor(rnd() * (i - 2));
    const comm = comms[Math.floor(rnd() * comms.length)];
    procs.push({ pid: i, ppid, comm, rssBytes: Math.floor(rnd() * 500e6), argv: rnd() < 0.02 ? [comm, 'mcp-server'] : [comm] });
  }
  return procs;
}
const trees = [tree(5000, 1), tree(5000, 2), tree(5000, 3)];
const chooser = measure(() => {
  for (const t of trees) chooseVictim(t, 2, undefined);
  return trees.length;
}, { rounds: 5 });
const baseline = measure(() => {
  for (const t of trees) {
    const byPid = new Map(t.map((p) => [p.pid, p]));
    const sums = new Map();
    for (const p of t) {
      if (p.pid === 2) continue;
      let q = p;
      while (q.ppid !== 2 && byPid.has(q.ppid)) q = byPid.get(q.ppid);
      sums.set(q.pid, (sums.get(q.pid) ?? 0) + p.rssBytes);
    }
    [...sums.entries()].sort((a, b) => b[1] - a[1]);
  }
  return trees.length;
}, { rounds: 5 });
out.push(row('victim choice, 5,000-process trees (all rules vs. bare subtree sums)', chooser, baseline));

// 3. Marker lookup in 2,000 environments (as read from /proc/<pid>/environ), against decoding
//    each whole environment to a string and splitting it.
const envs = Array.from({ length: 2000 }, (_, i) => Buffer.from(
  `${Array.from({ length: 40 }, (_, k) => `VAR_${k}=${'x'.repeat(40)}`).join('\0')}\0${i % 3 === 0 ? `SESSIONBRAKE_SESSION=s${i}\0` : ''}PATH=/usr/bin\0`));
const scan = measure(() => {
  for (const e of envs) environValue(e, 'SESSIONBRAKE_SESSION');
  return envs.length;
});
const split = measure(() => {
  for (const e of envs) e.toString('utf8').split('\0').find((kv) => kv.startsWith('SESSIONBRAKE_SESSION='));
  return envs.length;
});
out.push(row('marker lookup in 2,000 environments (byte scan vs. decode and split)', scan, split));

// 4. Parsing every cgroup file kind the feed reads, against a generic regex tokenizer.
const dir = path.resolve(__dirname, '../test/fixtures/cgroup/sessions.slice/wedged.scope');
const files = Object.fromEntries(['memory.stat', 'memory.events.local', 'memory.pressure', 'memory.high', 'cpu.stat'].map((f) => [f, fs.readFileSync(path.join(dir, f), 'utf8')]));
const stat = fs.readFileSync('/proc/self/stat', 'utf8');
const ours = measure(() => {
  parseFlatKeyed(files['memory.stat'], 'memory.stat');
  parseFlatKeyed(files['memory.events.local'], 'memory.events.local');
  parsePressure(files['memory.pressure'], 'memory.pressure');
  parseLimit(files['memory.high'], 'memory.high');
  parseFlatKeyed(files['cpu.stat'], 'cpu.stat');
  parseStat(stat, '/proc/self/stat');
  return 6;
});
const generic = measure(() => {
  for (const text of [...Object.values(files), stat]) {
    const o = {};
    for (const m of text.matchAll(/(\w+)[ =](\d+)/g)) o[m[1]] = Number(m[2]);
  }
  return 6;
});
out.push(row('parsing one of each cgroup/proc file (validating parsers vs. a generic regex)', ours, generic));

// 5. a notice into an inbox that holds 1,000 (issue 13): sbd's writer, which knows the file as its
// last append left it (a stat and a write), against reading the inbox before each append
const inboxes = fs.mkdtempSync(path.join(os.tmpdir(), 'sb-bench-inbox-'));
const notice = { atMs: Date.now(), from: '0123abcd', kind: 'match', text: 'dev: 1 new line matched', lines: ['ERROR: something failed'] };
const fill = (session) => { const w = new InboxWriter(inboxes); for (let i = 0; i < 1000; i++) w.append(session, notice); return w; };
const writer = fill('writer');
fill('reread');
const cached = measure(() => (writer.append('writer', notice), 1));
const reread = measure(() => (appendNotice(inboxes, 'reread', notice), 1));
fs.rmSync(inboxes, { recursive: true, force: true });
out.push(row('a notice appended to an inbox of 1,000 (remembered file vs. reading it first)', cached, reread));

// 6. The freeze check's read of 100 agents' /proc/PID/stat (issue 15, item 4: once a minute for
// every session): held open and read at offset 0 (HeldStats), against readFileSync by path and
// parseStat (what the check did before).
const { HeldStats } = require('../dist/proc/held-stat.js');
const pids = fs.readdirSync('/proc').filter((d) => /^\d+$/.test(d)).map(Number).filter((p) => { try { fs.readFileSync(`/proc/${p}/stat`); return true; } catch { return false; } }).slice(0, 100);
const held = new HeldStats();
const heldReads = measure(() => { let n = 0; for (const p of pids) if (held.read(String(p), p)) n++; return n; });
const byPath = measure(() => { let n = 0; for (const p of pids) { try { parseStat(fs.readFileSync(`/proc/${p}/stat`, 'utf8'), 'stat'); n++; } catch { /* exited */ } } return n; });
held.releaseAll();
out.push(row(`agents' /proc stat, ${pids.length} processes (held fd read at 0 vs. readFileSync by path)`, heldReads, byPath));

// 7. One Incident signal as bytes (issue 15, item 5: ~400 in the storm of 200): sbd's own writer
// (bus-lite encodeSignal, one growing buffer) against dbus-next's marshalling of the same signal
// (what sbd's signals went through before session 12).
const dbus = require('dbus-next');
const { marshallMessage } = require('dbus-next/lib/marshall-compat');
const { encodeSignal } = require('../dist/bus-lite/wire.js');
const { incidentToBus, INCIDENT_SIGNATURE } = require('../dist/daemon/bus-types.js');
const incidentArgs = incidentToBus(/** @type {any} */ ({
  type: 'standing-still', unit: 'storm-17.scope', session: 'storm-17', atMs: Date.now(), observeOnly: false,
  message: 'standing still against its own brake (standing-still; hot: share 0.90 at or above 0.2; share 0.90; anon 0.99; evidence own-high-moved+near-own-brake+alone-in-slice; hot windows 3; deadline in 600 s)',
  share: 0.9, anonShare: 0.99, evidence: ['own-high-moved', 'near-own-brake', 'alone-in-slice'], deadlineS: 600,
}));
const signal = { path: '/dev/sessionbrake/Manager1', interface: 'dev.sessionbrake.Manager1', member: 'Incident', signature: INCIDENT_SIGNATURE, body: incidentArgs };
const ownSignal = measure(() => (encodeSignal(7, signal).length > 0 ? 1 : 0));
const dbusNextSignal = measure(() => { const m = dbus.Message.newSignal(signal.path, signal.interface, signal.member, signal.signature, signal.body); m.serial = 7; return marshallMessage(m)[0].length > 0 ? 1 : 0; });
out.push(row('one Incident signal marshalled (bus-lite vs. dbus-next)', ownSignal, dbusNextSignal));

// 8. The same incident as a journal entry's bytes: encodeEntry (one buffer) against the protocol
// spelled field by field, a buffer each (what encodeEntry did before session 12).
const { encodeEntry } = require('../dist/journal/encode.js');
const { incidentEntry } = require('../dist/journal/incident-entry.js');
const entryFields = incidentEntry(/** @type {any} */ ({ type: 'standing-still', unit: 'storm-17.scope', session: 'storm-17', atMs: Date.now(), observeOnly: false, message: incidentArgs[4], share: 0.9, anonShare: 0.99, evidence: ['own-high-moved', 'near-own-brake'], deadlineS: 600 }), 4);
const perField = (fields) => Buffer.concat(fields.flatMap(([name, raw]) => {
  const value = typeof raw === 'string' ? Buffer.from(raw, 'utf8') : raw;
  if (!value.includes(0x0a)) return [Buffer.from(`${name}=`, 'ascii'), value, Buffer.from('\n')];
  const length = Buffer.alloc(8);
  length.writeBigUInt64LE(BigInt(value.length));
  return [Buffer.from(`${name}\n`, 'ascii'), length, value, Buffer.from('\n')];
}));
const oneBuffer = measure(() => (encodeEntry(entryFields).length > 0 ? 1 : 0));
const bufferEach = measure(() => (perField(entryFields).length > 0 ? 1 : 0));
out.push(row(`one incident's journal entry, ${entryFields.length} fields (one buffer vs. a buffer per part)`, oneBuffer, bufferEach));

console.log(`Host benchmarks, ${os.cpus()[0]?.model ?? 'cpu'} ×${os.cpus().length}, Node ${process.version}, ${new Date().toISOString().slice(0, 10)}\n`);
console.log('| what | sessionbrake | baseline | ratio |\n| --- | --- | --- | --- |');
for (const line of out) console.log(line);
