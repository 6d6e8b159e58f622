#!/usr/bin/env node
// @ts-check
'use strict';
// `npm run bench:sample-read`: boots the lab guest and measures what each of a feed's eight sample
// files costs to read again (bench/guest/sample-read.js) against a tmpfs file's read in the same
// run: where a storm's sample spends its CPU in the kernel (issue 15, item 5). N (2000) reads a
// round, ROUNDS (5) rounds.
const fs = require('node:fs');
const { runGuestBench } = require('./guest-run');
const { tsvAsMarkdown } = require('./lib');

const n = Number(process.env.N ?? 2000);
const rounds = Number(process.env.ROUNDS ?? 5);
const tsv = runGuestBench('sample-read', `cd /mnt/proj && as-tester node bench/guest/sample-read.js ${n} ${rounds} > "$LAB_OUT/sample-read.tsv"\n`);
console.log(`\nresults: ${tsv}`);
for (const line of tsvAsMarkdown(fs.readFileSync(tsv, 'utf8'))) console.log(line);
