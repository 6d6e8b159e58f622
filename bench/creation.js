#!/usr/bin/env node
// @ts-check
'use strict';
// `npm run bench:creation`: boots the lab guest and makes CREATION (200) sessions at once in front
// of a freshly started sbd (bench/guest/creation.sh): does sbd live through it (its restarts and
// watchdog time-outs), how many Gets it sent systemd (ten per scope read once), and how long until
// `sbctl status` listed them all. Run it on an older commit for the baseline (bench/RESULTS.md).
const fs = require('node:fs');
const { runGuestBench } = require('./guest-run');
const { tsvAsMarkdown } = require('./lib');

const n = Number(process.env.CREATION ?? 200);
process.env.SB_VM_MEM ??= '8192';
const tsv = runGuestBench('creation', `export CREATION=${n}\nbash /mnt/proj/bench/guest/creation.sh\n`);
console.log(`\nresults: ${tsv}`);
for (const line of tsvAsMarkdown(fs.readFileSync(tsv, 'utf8'))) console.log(line);
