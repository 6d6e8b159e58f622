#!/usr/bin/env node
// @ts-check
'use strict';
// `npm run bench:start-profile`: where sbd's start goes (issue 15, item 3). Boots the lab guest,
// makes N idle sessions for each N of SIZES (default "10 500") and restarts sbd under
// `node --cpu-prof` (bench/guest/start-profile.sh); prints the restart's wall time and the top
// self-time functions of each profile. The profiles stay beside the printed results path.
const fs = require('node:fs');
const path = require('node:path');
const { runGuestBench } = require('./guest-run');
const { selfTimes } = require('./profile-top');

const tsv = runGuestBench('start-profile', `export SIZES="${process.env.SIZES ?? '10 500'}" AFTER_READY_S=${process.env.AFTER_READY_S ?? 3}\nbash /mnt/proj/bench/guest/start-profile.sh\n`);
console.log(`\nresults: ${tsv}`);
for (const [n, startMs, spanMs] of fs.readFileSync(tsv, 'utf8').trim().split('\n').slice(1).map((l) => l.split('\t'))) {
  console.log(`\n${n} sessions: restart ${(Number(startMs) / 1000).toFixed(1)} s, sbd's "starting" to "ready" ${spanMs === '-' ? '-' : `${(Number(spanMs) / 1000).toFixed(1)} s`}`);
  const file = path.join(path.dirname(tsv), `start-${n}.cpuprofile`);
  if (!fs.existsSync(file)) continue;
  const { totalMs, rows } = selfTimes(JSON.parse(fs.readFileSync(file, 'utf8')));
  console.log(`profile ${file}: ${(totalMs / 1000).toFixed(1)} s`);
  for (const r of rows.slice(0, 20)) console.log(`  ${r.selfMs.toFixed(0).padStart(7)} ms  ${((100 * r.selfMs) / totalMs).toFixed(1).padStart(5)} %  ${r.fn}  ${r.where}`);
}
