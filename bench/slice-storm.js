#!/usr/bin/env node
// @ts-check
'use strict';
// `npm run bench:slice-storm`: boots the lab guest (3 GiB) with N (20) sessions under one slice
// brake, GREEDY (3) of them greedy (bench/guest/slice-storm.sh). Prints whether every greedy
// build was stopped and no innocent touched, and the slice-stall onset to culprit verdict
// (median, worst) over the episodes.
const fs = require('node:fs');
const path = require('node:path');
process.env.SB_VM_MEM ??= '3072';
const { runGuestBench } = require('./guest-run');
const { spread, secs } = require('./lib');

const n = Number(process.env.N ?? 20);
const greedy = Number(process.env.GREEDY ?? 3);
const tsv = runGuestBench('slice-storm', `export N=${n} GREEDY=${greedy}\nbash /mnt/proj/bench/guest/slice-storm.sh\n`);
const rows = fs.readFileSync(tsv, 'utf8').trim().split('\n').slice(1).map((l) => l.split('\t'));
const at = (what) => rows.filter((r) => r[0] === what).map((r) => ({ session: r[1], ms: Number(r[2]), detail: r[3] }));
const onsets = at('onset').map((r) => r.ms).sort((a, b) => a - b);
// each culprit verdict against the last onset of the slice before it
const lags = at('culprit').map((c) => {
  const before = onsets.filter((o) => o <= c.ms);
  return before.length ? (c.ms - before[before.length - 1]) / 1000 : undefined;
}).filter((x) => x !== undefined);
const fates = at('fate');
const stopped = new Set(at('subtree-stopped').map((r) => r.session));
const greedyStopped = fates.filter((f) => f.detail.startsWith('greedy') && stopped.has(f.session)).length;
const touched = fates.filter((f) => f.detail.startsWith('innocent') && (stopped.has(f.session) || at('culprit').some((c) => c.session === f.session)));
const sbd = Object.fromEntries(fs.readFileSync(path.join(path.dirname(tsv), 'slice-storm-sbd.txt'), 'utf8').trim().split('\n').map((l) => l.split('\t')));
const sp = spread(/** @type {number[]} */ (lags));
console.log(`\nresults: ${tsv}`);
console.log('| sessions | greedy | greedy builds stopped | innocents touched | slice onsets | onset to culprit verdict: median (min–max) | worst | sbd RSS after | sbd CPU |');
console.log('| --- | --- | --- | --- | --- | --- | --- | --- | --- |');
console.log(`| ${n} | ${greedy} | ${greedyStopped} | ${touched.length} | ${onsets.length} | ${secs(sp)} | ${sp ? sp.max.toFixed(1) : '-'} s | ${(Number(sbd.sbd_rss_kib) / 1024).toFixed(0)} MiB | ${sbd.sbd_cpu_s} s |`);
