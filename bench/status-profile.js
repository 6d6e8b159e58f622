#!/usr/bin/env node
// @ts-check
'use strict';
// `npm run bench:status-profile`: where `sbctl status` spends its time in the guest, with SESSIONS
// (500) real sessions (bench/guest/status-profile.sh): GetStatus timed through busctl against
// a Ping, sbd's self time under GetStatus, sbctl's modules and its own profile.
const fs = require('node:fs');
const path = require('node:path');
const { runGuestBench } = require('./guest-run');
const { spread } = require('./lib');
const { selfTimes } = require('./cpuprofile');

const tsv = runGuestBench('status-profile', `export SESSIONS=${Number(process.env.SESSIONS ?? 500)} CALLS=${Number(process.env.CALLS ?? 10)}\nbash /mnt/proj/bench/guest/status-profile.sh\n`);
const dir = path.dirname(tsv);
const rows = fs.readFileSync(tsv, 'utf8').trim().split('\n').slice(1).map((l) => l.split('\t'));
console.log(`\nresults: ${dir}`);
for (const what of [...new Set(rows.map((r) => r[0]))]) {
  const s = spread(rows.filter((r) => r[0] === what).map((r) => Number(r[2])));
  if (s) console.log(`${what}: ${s.median} ms (${s.min}–${s.max})`);
}
const top = (file, under) => {
  if (!fs.existsSync(file)) return console.log(`${file}: none`);
  const { totalUs, rows: fns } = selfTimes(JSON.parse(fs.readFileSync(file, 'utf8')), { under });
  console.log(`\n${path.basename(file)}${under ? ` under ${under}` : ''}: ${(totalUs / 1000).toFixed(0)} ms sampled`);
  for (const r of fns.slice(0, 20)) console.log(`${(r.selfUs / 1000).toFixed(1).padStart(9)} ms ${((100 * r.selfUs) / totalUs).toFixed(1).padStart(5)} %  ${r.name}`);
};
top(path.join(dir, 'sbd.cpuprofile'), 'GetStatus');
top(path.join(dir, 'sbd.cpuprofile'), 'run'); // StatusFigures.run: the reading off the call (after issue 15)
top(path.join(dir, 'sbctl.cpuprofile'));
