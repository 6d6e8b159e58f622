#!/usr/bin/env node
// @ts-check
'use strict';
// `npm run bench:idle`: boots the lab guest and measures sbd's idle cost at 10, 100 and 500
// sessions, on the event feed against 5 s timer sampling (bench/guest/idle.sh). Prints a table;
// SIZES="10 100" and SECONDS_EACH=30 shorten it.
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { spawnSync } = require('node:child_process');

const root = path.resolve(__dirname, '..');
const outDir = fs.mkdtempSync(path.join(os.tmpdir(), 'sb-bench-'));
if (spawnSync('bash', [path.join(root, 'test/vm/build-image.sh')], { stdio: ['ignore', 'ignore', 'inherit'] }).status !== 0) process.exit(1);
const env = { ...process.env };
const script = path.join(outDir, 'run.sh');
fs.writeFileSync(script, `export SIZES="${process.env.SIZES ?? '10 100 500'}" SECONDS_EACH=${process.env.SECONDS_EACH ?? 60}\nbash /mnt/proj/bench/guest/idle.sh\n`);
const r = spawnSync('bash', [path.join(root, 'test/vm/run-in-vm.sh'), '-p', root, '-o', outDir, '-t', '3000', '-f', script], { stdio: 'inherit', env });
const tsv = path.join(outDir, 'idle.tsv');
if (!fs.existsSync(tsv)) {
  console.error(`bench:idle: no results (run-in-vm exit ${r.status})`);
  process.exit(1);
}
const rows = fs.readFileSync(tsv, 'utf8').trim().split('\n').slice(1).map((l) => l.split('\t'));
console.log('\n| sessions | feed: wakeups/min (vol+invol) | feed: CPU s/min | 5 s sampling: wakeups/min | 5 s sampling: CPU s/min | fewer wakeups | sbd RSS (feed) | sbctl status --json wall |');
console.log('| --- | --- | --- | --- | --- | --- | --- | --- |');
for (const n of [...new Set(rows.map((x) => x[0]))]) {
  const f = rows.find((x) => x[0] === n && x[1] === 'feed');
  const s = rows.find((x) => x[0] === n && x[1] === 'sampling-5s');
  if (!f || !s) continue;
  const per = (x) => ((Number(x[3]) + Number(x[4])) * 60) / Number(x[2]);
  const cpu = (x) => ((Number(x[5]) * 60) / Number(x[2])).toFixed(2);
  console.log(`| ${n} | ${per(f).toFixed(0)} | ${cpu(f)} | ${per(s).toFixed(0)} | ${cpu(s)} | ${(per(s) / Math.max(1, per(f))).toFixed(1)}× | ${(Number(f[6]) / 1024).toFixed(0)} MiB | ${(Number(f[7]) / 1000).toFixed(1)} s |`);
}
