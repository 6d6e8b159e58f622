#!/usr/bin/env node
// @ts-check
'use strict';
// `npm run bench:margin` (host, a second): every recorded trace (test/fixtures/traces) replayed
// through the detector as the PSI feed takes it, with the onset cadence (0.5 s windows, three hot)
// and, side by side, the seed design (2 s windows from the wake, two hot). For each stall of a
// trace (a run of 250 ms records at or above the clear line): how long it lasted, how much of it
// was full stall, and when each design judged it standing still. Then the margin: the longest
// stall ignored as a burst and the shortest one caught. Needs `npm run build:ts` first.
const { loadTrace } = require('../test/support/traces.js');
const { judgeStalls, marginOf } = require('../test/support/feed-replay.js');
const { parseConfig } = require('../dist/config/load.js');

const cfg = parseConfig({}, 'defaults').detector;
const seed = { ...cfg, onsetWindowS: cfg.windowS, onsetHotWindows: cfg.hotWindowsToStall };
const TRACES = [['wedged', 'wedged.scope'], ['raised', 'raised.scope'], ['bursts', 'bursts.scope'], ['pagecache', 'cache.scope'], ['neighbour', 'innocent.scope'], ['neighbour', 'greedy.scope'], ['healthy', 'healthy.scope']];
const s = (ms) => (ms === undefined ? '–' : `${(ms / 1000).toFixed(2)} s`);
const after = (j) => (j.caughtAtMs === undefined ? 'ignored' : `after ${s(j.caughtAtMs - j.fromMs)}`);

console.log('| trace | stall from | length | full stall in it | onset cadence (3 × 0.5 s) | seed (2 × 2 s) |');
console.log('| --- | --- | --- | --- | --- | --- |');
const all = { onset: [], seed: [] };
for (const [trace, unit] of TRACES) {
  const records = loadTrace(trace);
  const ours = judgeStalls(records, unit, cfg);
  const theirs = judgeStalls(records, unit, seed);
  // page cache and neighbours: stalls that are not the session's own never count (anon fuse, own doing)
  const own = !['pagecache', 'neighbour'].includes(trace);
  if (own) all.onset.push(...ours), all.seed.push(...theirs);
  if (ours.length === 0) console.log(`| ${trace} ${unit} | no stall | | | no verdict | no verdict |`);
  ours.forEach((j, i) => console.log(`| ${trace} ${unit} | ${s(j.fromMs)} | ${s(j.lengthMs)} | ${s(j.stalledUs / 1000)} | ${after(j)} | ${after(theirs[i])} |`));
}
const m = { onset: marginOf(all.onset), seed: marginOf(all.seed) };
console.log('\n| design | longest stall ignored (a burst) | shortest stall caught | margin |');
console.log('| --- | --- | --- | --- |');
for (const [name, x] of Object.entries(m)) {
  const margin = x.longestIgnoredMs !== undefined && x.shortestCaughtMs !== undefined ? s(x.shortestCaughtMs - x.longestIgnoredMs) : '–';
  console.log(`| ${name} | ${s(x.longestIgnoredMs)} | ${s(x.shortestCaughtMs)} | ${margin} |`);
}
