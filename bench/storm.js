#!/usr/bin/env node
// @ts-check
'use strict';
// `npm run bench:storm`: boots the lab guest (3 GiB unless SB_VM_MEM says otherwise) and lets
// STORM (50) sessions hit their brakes at once with sbd on the event feed
// (bench/guest/storm.sh). Prints onset to verdict over all of them: median, min–max, the worst,
// and how many were caught.
const fs = require('node:fs');
const path = require('node:path');
process.env.SB_VM_MEM ??= '3072'; // 50 brakes of 32 MiB and their Pythons need more than 2 GiB
const { runGuestBench } = require('./guest-run');
const { spread, secs } = require('./lib');

const storm = Number(process.env.STORM ?? 50);
const tsv = runGuestBench('storm', `export STORM=${storm}\nbash /mnt/proj/bench/guest/storm.sh\n`);
const rows = fs.readFileSync(tsv, 'utf8').trim().split('\n').slice(1).map((l) => l.split('\t'));
const lags = rows.filter((x) => x[1] && x[2]).map((x) => (Number(x[2]) - Number(x[1])) / 1000);
const onsets = rows.filter((x) => x[1]).map((x) => Number(x[1]));
const sbd = Object.fromEntries(fs.readFileSync(path.join(path.dirname(tsv), 'storm-sbd.txt'), 'utf8').trim().split('\n').map((l) => l.split('\t')));
const sp = spread(lags);
console.log(`\nresults: ${tsv}`);
console.log('| sessions | reached the brake | onsets spread over | verdicts | onset to verdict: median (min–max) | worst | onset read every | sbd RSS after | sbd CPU during |');
console.log('| --- | --- | --- | --- | --- | --- | --- | --- | --- |');
console.log(`| ${storm} | ${onsets.length} | ${((Math.max(...onsets) - Math.min(...onsets)) / 1000).toFixed(1)} s | ${lags.length} | ${secs(sp)} | ${sp ? sp.max.toFixed(1) : '-'} s | ${sbd.onset_round_ms ?? '?'} ms | ${(Number(sbd.sbd_rss_kib) / 1024).toFixed(0)} MiB | ${sbd.sbd_cpu_s_during_storm} s |`);
