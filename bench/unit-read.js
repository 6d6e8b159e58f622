#!/usr/bin/env node
// @ts-check
'use strict';
// `npm run bench:unit-read`: boots the lab guest and measures what reading one unit over D-Bus
// costs a dbus-next client such as sbd, by the shape of the read (bench/guest/unit-read.js): the
// GetAll('') of every interface that sbd's getUnit makes (adoption reads every session this way,
// and every unit event reads its unit again), against the two interfaces it needs and against
// the eight properties it uses. UNITS (200) scopes, ROUNDS (3) rounds each, 16 in flight.
const fs = require('node:fs');
const { runGuestBench } = require('./guest-run');
const { tsvAsMarkdown } = require('./lib');

const units = Number(process.env.UNITS ?? 200);
const rounds = Number(process.env.ROUNDS ?? 3);
const tsv = runGuestBench('unit-read', `cd /mnt/proj && as-tester node bench/guest/unit-read.js ${units} ${rounds} > "$LAB_OUT/unit-read.tsv"\n`);
console.log(`\nresults: ${tsv}`);
for (const line of tsvAsMarkdown(fs.readFileSync(tsv, 'utf8'))) console.log(line);
