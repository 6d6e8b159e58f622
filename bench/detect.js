#!/usr/bin/env node
// @ts-check
'use strict';
// `npm run bench:detect`: boots the lab guest and times onset-to-verdict over WEDGES (10) wedges
// on the event feed and on 5 s timer sampling (bench/guest/detect.sh). Prints median, min, max.
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { spawnSync } = require('node:child_process');

const root = path.resolve(__dirname, '..');
const outDir = fs.mkdtempSync(path.join(os.tmpdir(), 'sb-bench-'));
if (spawnSync('bash', [path.join(root, 'test/vm/build-image.sh')], { stdio: ['ignore', 'ignore', 'inherit'] }).status !== 0) process.exit(1);
const script = path.join(outDir, 'run.sh');
fs.writeFileSync(script, `export WEDGES=${process.env.WEDGES ?? 10}\nbash /mnt/proj/bench/guest/detect.sh\n`);
spawnSync('bash', [path.join(root, 'test/vm/run-in-vm.sh'), '-p', root, '-o', outDir, '-t', '3000', '-f', script], { stdio: 'inherit' });
const tsv = path.join(outDir, 'detect.tsv');
if (!fs.existsSync(tsv)) process.exit(1);
const rows = fs.readFileSync(tsv, 'utf8').trim().split('\n').slice(1).map((l) => l.split('\t'));
console.log('\n| variant | wedges | caught | onset to verdict: median | min | max |\n| --- | --- | --- | --- | --- | --- |');
for (const v of ['feed', 'sampling-5s']) {
  const mine = rows.filter((x) => x[0] === v);
  const lat = mine.filter((x) => x[3]).map((x) => (Number(x[3]) - Number(x[2])) / 1000).sort((a, b) => a - b);
  const med = lat[Math.floor(lat.length / 2)];
  console.log(`| ${v} | ${mine.length} | ${lat.length} | ${med?.toFixed(1) ?? '-'} s | ${lat[0]?.toFixed(1) ?? '-'} s | ${lat.at(-1)?.toFixed(1) ?? '-'} s |`);
}
