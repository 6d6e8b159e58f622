#!/usr/bin/env node
// @ts-check
'use strict';
// Stall onset → verdict of a bench:detect run, again from its kept readings (pressure-NAME.json)
// with bench/stall-onset.js as it is now: for runs whose onsets were computed by an earlier rule.
//   node bench/stall-onsets.js RESULTS_DIR    prints, per variant: median (min–max) (found of all)
const fs = require('node:fs');
const path = require('node:path');
const { stallOnset } = require('./stall-onset');
const { spread, secs } = require('./lib');

const dir = process.argv[2];
if (!dir) {
  console.error('usage: node bench/stall-onsets.js RESULTS_DIR  (a bench:detect run with its pressure-*.json)');
  process.exit(2);
}
const byVariant = new Map();
for (const f of fs.readdirSync(dir).filter((x) => /^pressure-w-.*\.json$/.test(x))) {
  const variant = f.replace(/^pressure-w-/, '').replace(/-\d+\.json$/, '');
  const d = JSON.parse(fs.readFileSync(path.join(dir, f), 'utf8'));
  const onset = d.verdict ? stallOnset(d.pressure, d.verdict) : undefined;
  const list = byVariant.get(variant) ?? { found: [], all: 0 };
  list.all++;
  if (onset !== undefined) list.found.push((d.verdict - onset) / 1000);
  byVariant.set(variant, list);
}
for (const [variant, { found, all }] of byVariant) console.log(`${variant}: stall onset → verdict ${secs(spread(found))} (${found.length} of ${all})`);
