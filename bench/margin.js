#!/usr/bin/env node
// @ts-check
'use strict';
// `npm run bench:margin` (host, a second): every recorded trace (test/fixtures/traces) replayed
// through the detector as the PSI feed takes it, with the onset cadence (0.5 s windows, three hot)
// and, side by side, the seed design (2 s windows from the wake, two hot). For each stall of a
// trace (a run of 250 ms records at or above the clear line): how long it lasted, how much of it
// was full stall, and when each design judged it standing still. Then the margin: the longest
// stall ignored as a burst and the shortest one caught. A third column replays the onset cadence
// with every window 0.6 s late, as sbd runs behind its feeds in bench:storm (windows of 1.1 s),
// where two hot windows holding 1.2 s of full stall stand still (lateRunStandsStill). Needs
// `npm run build:ts` first.
const { loadTrace } = require('../test/support/traces.js');
const { judgeStalls, marginOf } = require('../test/support/feed-replay.js');
const { parseConfig } = require('../dist/config/load.js');

const cfg = parseConfig({}, 'defaults').detector;
const seed = { ...cfg, onsetWindowS: cfg.windowS, onsetHotWindows: cfg.hotWindowsToStall };
/** How late each window comes in the third column: bench:storm's windows of 1.0-1.3 s where 0.5 s were due. */
const STORM_LATE_MS = 600;
const TRACES = [['wedged', 'wedged.scope'], ['raised', 'raised.scope'], ['bursts', 'bursts.scope'], ['pagecache', 'cache.scope'], ['neighbour', 'innocent.scope'], ['neighbour', 'greedy.scope'], ['healthy', 'healthy.scope']];
const s = (ms) => (ms === undefined ? '–' : `${(ms / 1000).toFixed(2)} s`);
const after = (j) => (j.caughtAtMs === undefined ? 'ignored' : `after ${s(j.caughtAtMs - j.fromMs)}`);

console.log(`| trace | stall from | length | full stall in it | onset cadence (3 × 0.5 s) | onset, windows ${STORM_LATE_MS / 1000} s late | seed (2 × 2 s) |`);
console.log('| --- | --- | --- | --- | --- | --- | --- |');
const all = { onset: [], late: [], seed: [] };
for (const [trace, unit] of TRACES) {
  const records = loadTrace(trace);
  const ours = judgeStalls(records, unit, cfg);
  const late = judgeStalls(records, unit, cfg, { lateMs: STORM_LATE_MS });
  const theirs = judgeStalls(records, unit, seed);
  // page cache and neighbours: stalls that are not the session's own never count (anon fuse, own doing)
  const own = !['pagecache', 'neighbour'].includes(trace);
  if (own) all.onset.push(...ours), all.late.push(...late), all.seed.push(...theirs);
  if (ours.length === 0) console.log(`| ${trace} ${unit} | no stall | | | no verdict | no verdict | no verdict |`);
  ours.forEach((j, i) => console.log(`| ${trace} ${unit} | ${s(j.fromMs)} | ${s(j.lengthMs)} | ${s(j.stalledUs / 1000)} | ${after(j)} | ${after(late[i])} | ${after(theirs[i])} |`));
}
const m = { onset: marginOf(all.onset), [`onset, ${STORM_LATE_MS / 1000} s late`]: marginOf(all.late), seed: marginOf(all.seed) };
console.log('\n| design | longest stall ignored (a burst) | shortest stall caught | margin |');
console.log('| --- | --- | --- | --- |');
for (const [name, x] of Object.entries(m)) {
  const margin = x.longestIgnoredMs !== undefined && x.shortestCaughtMs !== undefined ? s(x.shortestCaughtMs - x.longestIgnoredMs) : '–';
  console.log(`| ${name} | ${s(x.longestIgnoredMs)} | ${s(x.shortestCaughtMs)} | ${margin} |`);
}
