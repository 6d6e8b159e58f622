#!/usr/bin/env node
// @ts-check
'use strict';
// What sbd did, two seconds at a time, in a bench:storm run with SBD_TIMING=1
// (bench/guest/sbd-timing.js): its CPU, its main thread on a CPU and runnable but waiting for one
// (the kernel's schedstat), its event loop idle, and calls / CPU ms of the hot functions.
// Then CPU ms per call of the tell's and the sample's parts, from the release to PER_CALL_S
// (9.5 s: the storm's peak, before the tail of judged sessions), to compare runs and builds.
//   node bench/sbd-timing-table.js RESULTS_DIR [PER_CALL_S]  (sbd-timing.jsonl or .jsonl.gz, storm-sbd.txt)
const fs = require('node:fs');
const path = require('node:path');
const { textOf, keptFile } = require('./lib');

const KEYS = ['feed.wake', 'feed.sample', 'incident.tell', 'feed.open', 'slice.read'];

/** The rows of the table (pure): one per pair of readings, times in s from `releasedMs`. */
function timingRows(readings, releasedMs) {
  const rows = [];
  for (let i = 1; i < readings.length; i++) {
    const a = readings[i - 1];
    const b = readings[i];
    const dt = b.upMs - a.upMs;
    if (dt <= 0) continue;
    const pct = (x, y) => (x === undefined || y === undefined ? undefined : (100 * (y - x)) / dt);
    const calls = Object.fromEntries(KEYS.map((k) => [k, { calls: (b.rows[k]?.calls ?? 0) - (a.rows[k]?.calls ?? 0), cpuMs: (b.rows[k]?.cpuMs ?? 0) - (a.rows[k]?.cpuMs ?? 0) }]));
    rows.push({ atS: (b.atMs - releasedMs) / 1000, cpu: pct(a.cpuMs, b.cpuMs), onCpu: pct(a.mainOnCpuMs, b.mainOnCpuMs), waiting: pct(a.mainRunnableWaitMs, b.mainRunnableWaitMs), loopIdle: pct(a.loopIdleMs, b.loopIdleMs), calls });
  }
  return rows;
}

const PER_CALL_KEYS = ['incident.tell', 'journal.entry', 'journal.encode', 'journal.send', 'incident.signal', 'feed.sample', 'feed.read'];

/**
 * Calls and CPU ms per call of each key (pure), between the last reading at or before the release
 * and the last at or before `toS` s after it; undefined without two such readings. `perCallMs` is
 * undefined for a key not called in it.
 */
function perCallFrom(readings, releasedMs, toS, keys = PER_CALL_KEYS) {
  const a = readings.filter((r) => r.atMs <= releasedMs).pop();
  const b = readings.filter((r) => r.atMs <= releasedMs + toS * 1000).pop();
  if (!a || !b || b === a) return undefined;
  const rows = Object.fromEntries(keys.map((k) => {
    const calls = (b.rows[k]?.calls ?? 0) - (a.rows[k]?.calls ?? 0);
    const cpuMs = (b.rows[k]?.cpuMs ?? 0) - (a.rows[k]?.cpuMs ?? 0);
    return [k, { calls, perCallMs: calls > 0 ? cpuMs / calls : undefined }];
  }));
  return { toS: (b.atMs - releasedMs) / 1000, rows };
}

function main(dir, perCallS) {
  const file = keptFile(dir, 'sbd-timing.jsonl');
  if (!file) throw new Error(`no sbd-timing.jsonl(.gz) in ${dir}: was the run made with SBD_TIMING=1?`);
  const readings = textOf(file).trim().split('\n').map((l) => JSON.parse(l));
  const sbd = Object.fromEntries(fs.readFileSync(path.join(dir, 'storm-sbd.txt'), 'utf8').trim().split('\n').map((l) => l.split('\t')));
  const f = (v) => (v === undefined ? '–' : `${v.toFixed(0)} %`);
  console.log(`| s from the release | sbd CPU | main thread on a CPU | runnable, waiting | loop idle | ${KEYS.map((k) => `${k} calls / CPU ms`).join(' | ')} |`);
  console.log(`| ${Array(5 + KEYS.length).fill('---').join(' | ')} |`);
  for (const r of timingRows(readings, Number(sbd.released_at_ms))) {
    if (r.atS < -4 || r.atS > 40) continue;
    console.log(`| ${r.atS.toFixed(1)} | ${f(r.cpu)} | ${f(r.onCpu)} | ${f(r.waiting)} | ${f(r.loopIdle)} | ${KEYS.map((k) => `${r.calls[k].calls} / ${r.calls[k].cpuMs}`).join(' | ')} |`);
  }
  const per = perCallFrom(readings, Number(sbd.released_at_ms), perCallS);
  if (!per) return;
  console.log(`\nCPU ms per call, release to ${per.toS.toFixed(1)} s: ${Object.entries(per.rows).map(([k, v]) => `${k} ${v.perCallMs === undefined ? '–' : v.perCallMs.toFixed(2)} (${v.calls})`).join(', ')}`);
}

if (require.main === module) {
  try {
    if (!process.argv[2]) throw new Error('usage: node bench/sbd-timing-table.js RESULTS_DIR [PER_CALL_S]');
    const perCallS = Number(process.argv[3] ?? 9.5);
    if (!(perCallS > 0)) throw new Error(`PER_CALL_S must be a number of seconds above 0, not ${JSON.stringify(process.argv[3])}`);
    main(process.argv[2], perCallS);
  } catch (err) {
    console.error(`sbd-timing-table: ${/** @type {Error} */ (err).message}`);
    process.exit(1);
  }
}

module.exports = { timingRows, perCallFrom };
