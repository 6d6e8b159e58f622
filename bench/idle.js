#!/usr/bin/env node
// @ts-check
'use strict';
// `npm run bench:idle`: boots the lab guest and measures the idle cost of 10, 100 and 500
// sessions: sbd on the event feed, sbd on 5 s timer sampling, and systemd-oomd watching the same
// slice (bench/guest/idle.sh). SIZES="10 100", SECONDS_EACH=30 and SETTLE_S=10 shorten it.
const fs = require('node:fs');
const { runGuestBench } = require('./guest-run');

const tsv = runGuestBench('idle', `export SIZES="${process.env.SIZES ?? '10 100 500'}" SECONDS_EACH=${process.env.SECONDS_EACH ?? 60} SETTLE_S=${process.env.SETTLE_S ?? 100}\nbash /mnt/proj/bench/guest/idle.sh\n`);
const rows = fs.readFileSync(tsv, 'utf8').trim().split('\n').slice(1).map((l) => l.split('\t'));
const perMin = (x) => ((Number(x[3]) + Number(x[4])) * 60) / Number(x[2]);
const wake = (x) => `${perMin(x).toFixed(0)} (${((Number(x[3]) * 60) / Number(x[2])).toFixed(0)}+${((Number(x[4]) * 60) / Number(x[2])).toFixed(0)})`;
const cpu = (x) => ((Number(x[5]) * 60) / Number(x[2])).toFixed(2);
console.log(`\nresults: ${tsv}`);
console.log('| sessions | sbd feed: wakeups/min (vol+invol) | CPU s/min | sbd 5 s sampling: wakeups/min | CPU s/min | systemd-oomd: wakeups/min | CPU s/min | feed vs sampling: fewer wakeups | sbd RSS (feed) | sbd start (adopt all) | sbctl status --json wall (node -e 0) |');
console.log('| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |');
for (const n of [...new Set(rows.map((x) => x[0]))]) {
  const [f, s, o] = ['feed', 'sampling-5s', 'oomd'].map((v) => rows.find((x) => x[0] === n && x[1] === v));
  if (!f || !s || !o) continue;
  console.log(`| ${n} | ${wake(f)} | ${cpu(f)} | ${wake(s)} | ${cpu(s)} | ${wake(o)} | ${cpu(o)} | ${(perMin(s) / Math.max(1, perMin(f))).toFixed(1)}× | ${(Number(f[6]) / 1024).toFixed(0)} MiB | ${(Number(f[8]) / 1000).toFixed(1)} s | ${f[7].split('/').map((ms) => (Number(ms) / 1000).toFixed(1)).join(' s (')} s) |`);
}
