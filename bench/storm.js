#!/usr/bin/env node
// @ts-check
'use strict';
// `npm run bench:storm`: boots the lab guest and, with sbd on the event feed, first lets SINGLES
// (5) sessions wedge one at a time (the baseline, in the same boot), then STORM (50) sessions hit
// their brakes at once (bench/guest/storm.sh), each with a BRAKE_MIB (32) brake. The guest has
// SB_VM_MEM MiB (3072, or 6144 from 100 sessions on: every session holds its brake and a Python).
// Prints onset to verdict for the singles and the storm (median, min–max), the storm's worst
// against the singles' median, how many were caught, and sbd's RSS and CPU during the storm.
//   STORM=200 BRAKE_MIB=16 npm run bench:storm      (issue 15, item 5)
// SBD_PROF=1: sbd under node --cpu-prof, its profile next to the results (bench/cpuprofile.js reads it).
const fs = require('node:fs');
const path = require('node:path');
const storm = Number(process.env.STORM ?? 50);
process.env.SB_VM_MEM ??= storm >= 100 ? '6144' : '3072';
const { runGuestBench } = require('./guest-run');
const { stormReport } = require('./storm-table');

const pass = ['SINGLES', 'BRAKE_MIB', 'SBD_PROF', 'SBD_TIMING', 'SBD_TIMING_PSI', 'SBD_ROOT_WEIGHT', 'PREFILL', 'ACCOUNTING'].filter((k) => process.env[k]).map((k) => `export ${k}=${JSON.stringify(process.env[k])}\n`).join('');
const tsv = runGuestBench('storm', `export STORM=${storm}\n${pass}bash /mnt/proj/bench/guest/storm.sh\n`);
const rows = fs.readFileSync(tsv, 'utf8').trim().split('\n').slice(1).map((l) => l.split('\t'));
const sbdFile = path.join(path.dirname(tsv), 'storm-sbd.txt');
if (!fs.existsSync(sbdFile)) {
  console.error(`bench:storm: the storm did not run to its end; sbd's unit and journal: ${path.dirname(tsv)}/sbd-unit.txt, sbd-journal.txt`);
  process.exit(1);
}
const sbd = Object.fromEntries(fs.readFileSync(sbdFile, 'utf8').trim().split('\n').map((l) => l.split('\t')));
console.log(`\nresults: ${tsv}`);
// the table, and who had the guest's CPU from the release to the last verdict (storm.sh's readings of each cgroup's cpu.stat)
console.log(stormReport(path.dirname(tsv), rows, sbd, storm));
