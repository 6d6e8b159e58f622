#!/usr/bin/env node
// @ts-check
'use strict';
// `npm run bench:status-guest`: boots the lab guest, starts sbd with SESSIONS (500) real sessions
// and times ROUNDS (15) interleaved runs each of `node -e 0`, `sbctl status --json` (one GetStatus
// call, no dbus-next) and the full program, each with sbd idle, then COLD (3) cold calls
// (bench/guest/status.sh). Prints medians (min-max) and each against `node -e 0` (issue 15's
// target: status at most 1.5x).
const fs = require('node:fs');
const { runGuestBench } = require('./guest-run');
const { spread } = require('./lib');

const tsv = runGuestBench('status', `export SESSIONS=${Number(process.env.SESSIONS ?? 500)} ROUNDS=${Number(process.env.ROUNDS ?? 15)} COLD=${Number(process.env.COLD ?? 3)}\nbash /mnt/proj/bench/guest/status.sh\n`);
const rows = fs.readFileSync(tsv, 'utf8').trim().split('\n').slice(1).map((l) => l.split('\t'));
const of = (what) => spread(rows.filter((x) => x[0] === what).map((x) => Number(x[2])));
const base = of('node -e 0');
const NAMES = { 'node -e 0': '`node -e 0`', fast: '`sbctl status --json` (one GetStatus call)', full: '`sbctl -c FILE status --json` (the full program)', busy: '`sbctl status --json` right after another (sbd reading again meanwhile)', cold: '`sbctl status --json`, figures older than the stale limit (30 s): read before the answer' };
console.log(`\nresults: ${tsv}`);
console.log('| command | wall ms: median (min–max) | against `node -e 0` |');
console.log('| --- | --- | --- |');
for (const [k, label] of Object.entries(NAMES)) {
  const s = of(k);
  if (s && base) console.log(`| ${label} | ${s.median} (${s.min}–${s.max}) | ${(s.median / base.median).toFixed(2)}× |`);
}
