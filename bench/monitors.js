#!/usr/bin/env node
// @ts-check
'use strict';
// `npm run bench:monitors` (issue 13): boots the lab guest and measures, with sbd installed for
// tester: a tail monitor's output line to its inbox notice over LINES lines (median, worst,
// against the same append's own inotify event), and the idle cost of 100 tail monitors against
// a loop polling the same 100 files every second (bench/guest/monitors.js). LINES=200
// WINDOW_S=30 SETTLE_S=30 shorten it.
const fs = require('node:fs');
const path = require('node:path');
const { runGuestBench } = require('./guest-run');
const { spread } = require('./lib');

const env = ['LINES', 'WINDOW_S', 'SETTLE_S', 'TAILS'].filter((k) => process.env[k]).map((k) => `${k}=${process.env[k]}`).join(' ');
const tsv = runGuestBench('monitors', [
  'cd /mnt/proj',
  'as-tester node dist/cli/main.js install >/dev/null',
  'as-tester mkdir -p /home/tester/.config/sessionbrake',
  "echo '{}' | as-tester tee /home/tester/.config/sessionbrake/config.json >/dev/null",
  'as-tester systemctl --user restart sbd.service',
  `as-tester env ${env} node bench/guest/monitors.js "$LAB_OUT"`,
  '',
].join('\n'));
const dir = path.dirname(tsv);
const rows = (file) => fs.readFileSync(path.join(dir, file), 'utf8').trim().split('\n').slice(1).map((l) => l.split('\t'));
const lat = rows('monitor-latency.tsv');
const ms = (xs) => {
  const s = spread(xs);
  return { text: `${s.median.toFixed(1)} ms (${s.min.toFixed(1)}–${s.max.toFixed(1)})`, median: s.median, max: s.max };
};
const inotify = ms(lat.map((r) => Number(r[1])));
const notice = ms(lat.map((r) => Number(r[2])));
const sorted = lat.map((r) => Number(r[2])).sort((a, b) => a - b);
const p99 = sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * 0.99))];
console.log(`\nresults: ${dir}`);
console.log(`| lines | output line → inbox notice: median (min–max) | p99 | worst | the append's own inotify event: median (min–max) | notice / inotify (medians) |`);
console.log('| --- | --- | --- | --- | --- | --- |');
console.log(`| ${lat.length} | ${notice.text} | ${p99.toFixed(1)} ms | ${notice.max.toFixed(1)} ms | ${inotify.text} | ${(notice.median / inotify.median).toFixed(1)}× |`);
const idle = rows('monitors.tsv');
const perMin = (r) => ((Number(r[2]) + Number(r[3])) * 60) / Number(r[1]);
console.log('\n| what | wakeups/min (vol+invol) | CPU s/min | RSS |');
console.log('| --- | --- | --- | --- |');
for (const r of idle) console.log(`| ${r[0]} | ${perMin(r).toFixed(0)} (${((Number(r[2]) * 60) / Number(r[1])).toFixed(0)}+${((Number(r[3]) * 60) / Number(r[1])).toFixed(0)}) | ${((Number(r[4]) * 60) / Number(r[1])).toFixed(2)} | ${(Number(r[5]) / 1024).toFixed(0)} MiB |`);
const [, tails, loop] = idle;
if (tails && loop) console.log(`\n100 tails against the polling loop: ${(perMin(loop) / Math.max(1, perMin(tails))).toFixed(1)}× fewer wakeups`);
