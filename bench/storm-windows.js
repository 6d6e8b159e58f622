#!/usr/bin/env node
// @ts-check
'use strict';
// Why the storm's slowest sessions were judged when they were: each one's wakes and windows as
// sbd took them (bench/guest/sbd-timing.js, SBD_TIMING=1: sbd-timing-windows.jsonl), in s from its
// stall's onset (bench/stall-onset.js), beside that onset and the verdict.
//   node bench/storm-windows.js RESULTS_DIR [N]      (the N slowest from the stall's onset, 5)
const fs = require('node:fs');
const path = require('node:path');
const { withStallOnsets, pressureOf } = require('./storm-table');

/**
 * One line per storm session among the `n` slowest from its stall's onset to its verdict (pure).
 * `rows`: storm.tsv's rows with the stall onset as 5th column (withStallOnsets); `windows`: the
 * feeds' records ({ t, u, wake } or { t, u, timerMs, late, ev, kind, ms, share, anon, why, hot };
 * anon and why only in records of runs since session 18's second storm, why only of clear windows).
 */
function slowestTimelines(rows, windows, n) {
  const lag = (x) => (Number(x[3]) - Number(x[4])) / 1000;
  const slow = rows.filter((x) => x[0] === 'storm' && x[3] && x[4]).sort((a, b) => lag(b) - lag(a)).slice(0, n);
  return slow.map((x) => {
    const stall = Number(x[4]);
    const at = (t) => ((t - stall) / 1000).toFixed(1);
    const steps = windows.filter((w) => w.u === x[1] && w.t >= stall - 3000 && w.t <= Number(x[3]) + 500).map((w) => {
      if (w.wake !== undefined) return `${at(w.t)} wake (${w.wake})`;
      const kind = w.kind === undefined ? w.ev : `${w.kind}${w.share === undefined ? '' : ` ${w.share.toFixed(2)}`}${w.anon === undefined ? '' : ` anon ${w.anon.toFixed(2)}`}${w.why === undefined ? '' : ` (${w.why})`}`;
      return `${at(w.t)} ${w.ms === undefined ? '' : `${(w.ms / 1000).toFixed(1)} s `}${kind}${w.timerMs ? ` [${w.timerMs / 1000} s timer, late ${w.late}]` : ''}${w.ev === 'standing-still' ? ' VERDICT' : ''}`;
    });
    return `${x[1]}: lag ${lag(x).toFixed(1)} s, brake at ${at(Number(x[2]))}: ${steps.join('; ')}`;
  });
}

function main(dir, n) {
  const rows = fs.readFileSync(path.join(dir, 'storm.tsv'), 'utf8').trim().split('\n').slice(1).map((l) => l.split('\t'));
  const file = path.join(dir, 'sbd-timing-windows.jsonl');
  if (!fs.existsSync(file)) throw new Error(`${file}: none (run bench:storm with SBD_TIMING=1)`);
  const windows = fs.readFileSync(file, 'utf8').trim().split('\n').filter(Boolean).map((l) => JSON.parse(l));
  console.log(slowestTimelines(withStallOnsets(rows, pressureOf(dir)), windows, n).join('\n'));
}

if (require.main === module) {
  try {
    main(process.argv[2] ?? '.', Number(process.argv[3] ?? 5));
  } catch (err) {
    console.error(`storm-windows: ${/** @type {Error} */ (err).message}`);
    process.exit(1);
  }
}

module.exports = { slowestTimelines };
