#!/usr/bin/env node
// @ts-check
'use strict';
// `npm run bench:detect`: boots the lab guest and runs WEDGES (10) wedges each with sbd on the
// event feed (0.5 s onset windows, and the first design's 2 s ones), sbd on 5 s timer sampling, and systemd-oomd, then OTHERS_WEDGES (3) each with
// earlyoom and nohang alone (bench/guest/detect.sh; VARIANTS="earlyoom nohang" runs only those). Prints, per
// variant, onset to verdict and onset to action (median, min–max) and what was stopped.
const fs = require('node:fs');
const { runGuestBench } = require('./guest-run');
const { spread, secs } = require('./lib');

const pass = ['WEDGES', 'OTHERS_WEDGES', 'OTHERS_TIMEOUT_S', 'VARIANTS', 'SBD_LOG_LEVEL'].filter((k) => process.env[k]).map((k) => `export ${k}=${JSON.stringify(process.env[k])}\n`).join('');
const tsv = runGuestBench('detect', `${pass}bash /mnt/proj/bench/guest/detect.sh\n`);
const rows = fs.readFileSync(tsv, 'utf8').trim().split('\n').slice(1).map((l) => l.split('\t'));
const NAMES = {
  feed: 'sbd, event feed (PSI trigger, then 0.5 s windows, three hot)', 'feed-2s': 'sbd, event feed, the first design (2 s windows, two hot)', 'sampling-5s': 'sbd, timer sampling every 5 s', oomd: 'systemd-oomd (Debian defaults)',
  earlyoom: 'earlyoom (Debian defaults)', nohang: 'nohang (Debian defaults)',
};
console.log(`\nresults: ${tsv}`);
// "onset": the brake reached (memory.current at it); "stall onset": where the stall that holds the
// verdict began, as the kernel counted it (bench/stall-onset.js): the first is the workload's
// ramp from its brake to a sustained stall plus sbd's part, the second sbd's part.
console.log('| variant | wedges | verdicts | onset to verdict | stall onset to verdict | acted | onset to action | stopped (alive) |');
console.log('| --- | --- | --- | --- | --- | --- | --- | --- |');
for (const [v, label] of Object.entries(NAMES)) {
  const mine = rows.filter((x) => x[0] === v);
  if (mine.length === 0) continue;
  const after = (col) => mine.filter((x) => x[col]).map((x) => (Number(x[col]) - Number(x[2])) / 1000);
  const verdicts = after(3);
  const fromStall = mine.filter((x) => x[3] && x[7]).map((x) => (Number(x[3]) - Number(x[7])) / 1000);
  const acts = after(4);
  const outcomes = new Map();
  for (const x of mine) outcomes.set(`${x[6]} (${x[5]})`, (outcomes.get(`${x[6]} (${x[5]})`) ?? 0) + 1);
  const stopped = [...outcomes].map(([k, n]) => `${n}× ${k}`).join('; ');
  console.log(`| ${label} | ${mine.length} | ${verdicts.length} | ${secs(spread(verdicts))} | ${secs(spread(fromStall))} (${fromStall.length}) | ${acts.length} | ${secs(spread(acts))} | ${stopped} |`);
}
