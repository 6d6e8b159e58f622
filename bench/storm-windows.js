#!/usr/bin/env node
// @ts-check
'use strict';
// Why the storm's slowest sessions were judged when they were: each one's wakes and windows as
// sbd took them (bench/guest/sbd-timing.js, SBD_TIMING=1: sbd-timing-windows.jsonl), in s from its
// stall's onset (bench/stall-onset.js), beside that onset and the verdict; then the worst with each
// onset moved past the windows sbd judged page cache (fuseAwareWorst), and past those too in which
// the kernel measured the stall paused (under the clear line); how long after each breach sbd
// woke its feed (breachToWake) and how long its onset windows were; then where sbd's samples went,
// 2 s at a time: feeds not judged yet against those judged (samplesByPhase).
//   node bench/storm-windows.js RESULTS_DIR [N]      (the N slowest from the stall's onset, 5; a kept
//   run's files may be gzipped)
const fs = require('node:fs');
const path = require('node:path');
const { spread, textOf, keptFile } = require('./lib');
const { withStallOnsets, pressureOf } = require('./storm-table');

/** design.md §4's anon fuse, sbd's default detector.anonFuse: the records carry the share, not the line. */
const ANON_FUSE = 0.9;

/** Under the anon fuse, what the rest of the window's charge was: page cache (`pc`, recorded since
 * session 35) and the remainder, kernel memory and the like. */
const restOf = (w) => (w.pc === undefined || w.anon === undefined || w.anon >= ANON_FUSE ? '' : ` (page cache ${w.pc.toFixed(2)}, other ${Math.max(0, 1 - w.anon - w.pc).toFixed(2)})`);

/**
 * One line per storm session among the `n` slowest from its stall's onset to its verdict (pure).
 * `rows`: storm.tsv's rows with the stall onset as 5th column (withStallOnsets); `windows`: the
 * feeds' records ({ t, u, wake } or { t, u, timerMs, late, ev, kind, ms, share, anon, why, hot };
 * anon and why only in records of runs since session 18's second storm, why only of clear windows;
 * pc, the page cache's share of the charge, since session 35's).
 */
function slowestTimelines(rows, windows, n) {
  const lag = (x) => (Number(x[3]) - Number(x[4])) / 1000;
  const slow = rows.filter((x) => x[0] === 'storm' && x[3] && x[4]).sort((a, b) => lag(b) - lag(a)).slice(0, n);
  return slow.map((x) => {
    const stall = Number(x[4]);
    const at = (t) => ((t - stall) / 1000).toFixed(1);
    const steps = windows.filter((w) => w.u === x[1] && w.t >= stall - 3000 && w.t <= Number(x[3]) + 500).map((w) => {
      if (w.wake !== undefined) return `${at(w.t)} wake (${w.wake})`;
      const kind = w.kind === undefined ? w.ev : `${w.kind}${w.share === undefined ? '' : ` ${w.share.toFixed(2)}`}${w.anon === undefined ? '' : ` anon ${w.anon.toFixed(2)}`}${restOf(w)}${w.cpu === undefined ? '' : ` cpu ${w.cpu.toFixed(2)}`}${w.starved ? ' starved' : ''}${w.why === undefined ? '' : ` (${w.why})`}`;
      return `${at(w.t)} ${w.ms === undefined ? '' : `${(w.ms / 1000).toFixed(1)} s `}${kind}${w.timerMs ? ` [${w.timerMs / 1000} s timer, late ${w.late}]` : ''}${w.ev === 'standing-still' ? ' VERDICT' : ''}`;
    });
    return `${x[1]}: lag ${lag(x).toFixed(1)} s, brake at ${at(Number(x[2]))}: ${steps.join('; ')}`;
  });
}

/**
 * The storm's worst from the stall's onset, and the same with the onset moved past the windows sbd
 * judged page cache (pure): design.md §4's anon fuse ((anon + shmem) / current under `fuse`) makes
 * a window at or above the clear line no stall, and the bench's onset (the pressure alone) does
 * not read anon. Each session's onset moves to the end of the last such window of its own between
 * its stall's onset and its verdict, when there is one. `rows` and `windows` as slowestTimelines';
 * windows without an anon share (runs before session 18's second storm) move nothing.
 */
function fuseAwareWorst(rows, windows, { fuse = ANON_FUSE, clear = 0.1, paused = false } = {}) {
  const byUnit = new Map();
  for (const w of windows) if (w.anon !== undefined && w.share !== undefined) (byUnit.get(w.u) ?? byUnit.set(w.u, []).get(w.u)).push(w);
  // `paused`: a window the kernel measured under the clear line (the stall paused) moves it too
  const notStalled = (w) => (w.share >= clear && w.anon < fuse) || (paused && w.share < clear);
  const lags = (run) => rows.filter((x) => x[0] === run && x[3] && x[4]).map((x) => {
    const stall = Number(x[4]);
    const verdict = Number(x[3]);
    const pageCache = (byUnit.get(x[1]) ?? []).filter((w) => w.t > stall && w.t <= verdict && notStalled(w));
    const onset = pageCache.length ? Math.max(stall, ...pageCache.map((w) => w.t)) : stall;
    return { unit: x[1], raw: (verdict - stall) / 1000, lag: (verdict - onset) / 1000, moved: pageCache.length > 0 };
  });
  const singles = lags('single');
  const storm = lags('storm');
  if (singles.length === 0 || storm.length === 0) return undefined;
  const worstRaw = storm.reduce((a, b) => (b.raw > a.raw ? b : a));
  const worst = storm.reduce((a, b) => (b.lag > a.lag ? b : a));
  // each worst over the singles' median measured the same way
  return { singleRaw: spread(singles.map((x) => x.raw)).median, single: spread(singles.map((x) => x.lag)).median, worstRaw, worst, moved: storm.filter((x) => x.moved).map((x) => x.unit) };
}

/** fuseAwareWorst as one line; `paused`: it was measured with that option. */
function fuseAwareLine(r, paused = false) {
  if (r === undefined) return 'fuse-aware worst: no singles or no storm verdicts with a stall onset';
  const x = (v, by) => `${(v / by).toFixed(2)}×`;
  const past = paused ? 'the windows sbd judged page cache or measured clear (the stall paused)' : 'the windows sbd judged page cache (anon fuse open';
  return `from the stall's onset: worst ${r.worstRaw.raw.toFixed(1)} s (${r.worstRaw.unit}, ${x(r.worstRaw.raw, r.singleRaw)} the singles' median ${r.singleRaw.toFixed(1)} s); ` +
    `with each onset moved past ${past}${paused ? ' (' : '; '}${r.moved.length} session${r.moved.length === 1 ? '' : 's'}${r.moved.length ? `: ${r.moved.slice(0, 5).join(' ')}${r.moved.length > 5 ? ' …' : ''}` : ''}): ` +
    `worst ${r.worst.lag.toFixed(1)} s (${r.worst.unit}, ${x(r.worst.lag, r.single)} the singles' median so measured, ${r.single.toFixed(1)} s)`;
}

/**
 * Where sbd's samples went in the storm (pure): per `binMs` from the storm's first record, the
 * feeds taking onset windows (not judged yet, a wake's first sample included), the samples a
 * second they took, and the samples a second of feeds on steady or stretched windows (judged: a
 * deadline runs), with how many of those were stretched. Only the storm's sessions (unit storm-*).
 */
function samplesByPhase(windows, binMs = 2000, onsetMs = 500) {
  const storm = windows.filter((w) => w.u.startsWith('storm') && w.wake === undefined);
  if (storm.length === 0) return [];
  const t0 = Math.min(...storm.map((w) => w.t));
  const bins = [];
  for (const w of storm) {
    const i = Math.floor((w.t - t0) / binMs);
    const b = (bins[i] ??= { fromS: (i * binMs) / 1000, onsetFeeds: new Set(), onset: 0, judged: 0, stretched: 0 });
    if (w.ev === 'first-sample' || w.timerMs === onsetMs) {
      b.onsetFeeds.add(w.u);
      b.onset++;
    } else if (w.timerMs > onsetMs) {
      b.judged++;
      if (w.timerMs > 2000) b.stretched++;
    }
  }
  const perS = (k) => Math.round((k * 1000) / binMs);
  return [...bins].filter(Boolean).map((b) => ({ fromS: b.fromS, onsetFeeds: b.onsetFeeds.size, onsetPerS: perS(b.onset), judgedPerS: perS(b.judged), stretchedPerS: perS(b.stretched) }));
}

/** Count, median, p90 and largest of some numbers (pure); undefined when there are none. */
function tailOf(xs) {
  if (xs.length === 0) return undefined;
  const s = [...xs].sort((a, b) => a - b);
  const at = (q) => s[Math.min(s.length - 1, Math.floor(q * s.length))];
  return { n: s.length, p50: at(0.5), p90: at(0.9), max: s[s.length - 1] };
}

/**
 * How long after its brake was first breached (storm.tsv's onset: the harness's reading of
 * memory.events.local on the kernel's notice) sbd woke each storm session's feed (pure): the first
 * wake at or after the breach, of the feeds asleep then (no record of theirs in the `awakeMs`
 * before it: a feed's windows come every 0.5-2 s, longer only stretched under a deadline). The
 * harness and sbd watch the same file; the gap is sbd's own wait for its event loop (Node polls
 * for I/O only after every due timer ran: bench/RESULTS.md, session 33). `rows`: storm.tsv's rows; `windows`:
 * as slowestTimelines'. undefined without a storm session woken after its breach.
 */
function breachToWake(rows, windows, awakeMs = 2500) {
  const byUnit = new Map();
  for (const w of windows) (byUnit.get(w.u) ?? byUnit.set(w.u, []).get(w.u)).push(w);
  const gaps = [];
  let awake = 0;
  for (const x of rows) {
    if (x[0] !== 'storm' || !x[2]) continue;
    const breach = Number(x[2]);
    const own = byUnit.get(x[1]) ?? [];
    if (own.some((w) => w.t < breach && w.t >= breach - awakeMs)) {
      awake++;
      continue;
    }
    const first = own.filter((w) => w.wake !== undefined && w.t >= breach).reduce((a, w) => Math.min(a, w.t), Infinity);
    if (first !== Infinity) gaps.push({ unit: x[1], s: (first - breach) / 1000 });
  }
  const tail = tailOf(gaps.map((g) => g.s));
  if (tail === undefined) return undefined;
  const worst = gaps.reduce((a, b) => (b.s > a.s ? b : a));
  return { ...tail, awake, worstUnit: worst.unit };
}

/** breachToWake as one line. */
function breachToWakeLine(r) {
  if (r === undefined) return 'breach → wake: no storm session woken after its breach';
  return `breach → wake (${r.n} sessions asleep at their breach, ${r.awake} awake left out): median ${r.p50.toFixed(2)} s, p90 ${r.p90.toFixed(2)} s, worst ${r.max.toFixed(2)} s (${r.worstUnit})`;
}

/**
 * How long the storm sessions' onset windows were, due 0.5 s (pure): median, p90 and longest, in
 * s. Their length is the period sbd got round to each awake feed at; with breachToWake it shows
 * where a storm's wait went (bench/RESULTS.md, session 33). undefined without one.
 */
function onsetWindowLengths(windows, onsetMs = 500) {
  return tailOf(windows.filter((w) => w.u.startsWith('storm') && w.timerMs === onsetMs && typeof w.ms === 'number').map((w) => w.ms / 1000));
}

/** onsetWindowLengths as one line. */
function onsetWindowLine(r) {
  if (r === undefined) return 'onset windows: none';
  return `onset windows (${r.n}, due 0.5 s): median ${r.p50.toFixed(2)} s, p90 ${r.p90.toFixed(2)} s, longest ${r.max.toFixed(2)} s`;
}

/** samplesByPhase as lines, up to the last bin with a feed not judged yet. */
function samplesByPhaseLines(bins) {
  const last = bins.reduce((k, b, i) => (b.onsetFeeds > 0 ? i : k), -1);
  return bins.slice(0, last + 1).map((b) => `${String(b.fromS).padStart(4)} s: ${b.onsetFeeds} feeds not judged yet, ${b.onsetPerS} samples/s; judged ${b.judgedPerS} samples/s (${b.stretchedPerS} on stretched windows)`);
}

function main(dir, n) {
  const rows = fs.readFileSync(path.join(dir, 'storm.tsv'), 'utf8').trim().split('\n').slice(1).map((l) => l.split('\t'));
  const file = keptFile(dir, 'sbd-timing-windows.jsonl');
  if (!file) throw new Error(`no sbd-timing-windows.jsonl(.gz) in ${dir} (run bench:storm with SBD_TIMING=1)`);
  const windows = textOf(file).trim().split('\n').filter(Boolean).map((l) => JSON.parse(l));
  const withOnsets = withStallOnsets(rows, pressureOf(dir));
  console.log(slowestTimelines(withOnsets, windows, n).join('\n'));
  console.log(fuseAwareLine(fuseAwareWorst(withOnsets, windows)));
  console.log(fuseAwareLine(fuseAwareWorst(withOnsets, windows, { paused: true }), true));
  console.log(breachToWakeLine(breachToWake(rows, windows)));
  console.log(onsetWindowLine(onsetWindowLengths(windows)));
  console.log(`samples per 2 s from the storm's first:\n${samplesByPhaseLines(samplesByPhase(windows)).join('\n')}`);
}

if (require.main === module) {
  try {
    main(process.argv[2] ?? '.', Number(process.argv[3] ?? 5));
  } catch (err) {
    console.error(`storm-windows: ${/** @type {Error} */ (err).message}`);
    process.exit(1);
  }
}

module.exports = { slowestTimelines, fuseAwareWorst, fuseAwareLine, breachToWake, breachToWakeLine, onsetWindowLengths, onsetWindowLine, samplesByPhase, samplesByPhaseLines };
