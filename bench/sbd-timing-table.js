#!/usr/bin/env node
// @ts-check
'use strict';
// What sbd did, two seconds at a time, in a bench:storm run with SBD_TIMING=1
// (bench/guest/sbd-timing.js): its CPU, its main thread on a CPU and runnable but waiting for one
// (the kernel's schedstat), its event loop idle, and calls / CPU ms of the hot functions.
//   node bench/sbd-timing-table.js RESULTS_DIR      (sbd-timing.jsonl or .jsonl.gz, storm-sbd.txt)
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

function main(dir) {
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
}

if (require.main === module) {
  try {
    if (!process.argv[2]) throw new Error('usage: node bench/sbd-timing-table.js RESULTS_DIR');
    main(process.argv[2]);
  } catch (err) {
    console.error(`sbd-timing-table: ${/** @type {Error} */ (err).message}`);
    process.exit(1);
  }
}

module.exports = { timingRows };
