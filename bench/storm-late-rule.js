#!/usr/bin/env node
// @ts-check
'use strict';
// What the late rule (stall/detector.ts lateRunStandsStill: two hot onset windows that held
// lateRunStallMs of full stall stand still) would have changed in a kept storm run taken without
// it: each session's windows as sbd took them (sbd-timing-windows.jsonl), replayed on the rule
// alone, and the verdict moved to the window where the rule holds. An estimate: it leaves the
// run's load as it was, where sooner verdicts take fewer windows and make every feed less late.
// On a run taken with the rule nothing moves. Needs `npm run build:ts` first.
//   node bench/storm-late-rule.js RESULTS_DIR [STALL_MS]   (STALL_MS: the rule's stall, default lateRunStallMs)
const fs = require('node:fs');
const path = require('node:path');
const { textOf, keptFile } = require('./lib');
const { withStallOnsets, pressureOf } = require('./storm-table');

/**
 * When a session's first standing-still verdict would have come under the late rule (pure): the
 * time of the first hot window that ends a run of at least two hot windows, in a row since the
 * wake (warm windows neither add nor end, a clear one or a new wake ends it), holding `stallMs`
 * of full stall (share × ms) between them; the verdict's own time when the rule came no sooner;
 * undefined without a verdict. `windows`: one session's records in time order.
 */
function lateRuleVerdictAt(windows, stallMs) {
  const end = windows.findIndex((w) => w.ev === 'standing-still');
  if (end < 0) return undefined;
  let hot = 0;
  let stall = 0;
  for (const w of windows.slice(0, end + 1)) {
    if (w.wake !== undefined || w.ev === 'first-sample' || w.kind === 'clear') hot = stall = 0;
    else if (w.kind === 'hot') {
      stall = (hot === 0 ? 0 : stall) + w.share * w.ms;
      hot++;
      if (hot >= 2 && stall >= stallMs) return Math.min(w.t, windows[end].t);
    }
  }
  return windows[end].t;
}

function main(dir, stallMs) {
  const rows = fs.readFileSync(path.join(dir, 'storm.tsv'), 'utf8').trim().split('\n').slice(1).map((l) => l.split('\t'));
  const file = keptFile(dir, 'sbd-timing-windows.jsonl');
  if (!file) throw new Error(`no sbd-timing-windows.jsonl(.gz) in ${dir} (run bench:storm with SBD_TIMING=1)`);
  const byUnit = new Map();
  for (const w of textOf(file).trim().split('\n').filter(Boolean).map((l) => JSON.parse(l))) {
    if (!byUnit.has(w.u)) byUnit.set(w.u, []);
    byUnit.get(w.u).push(w);
  }
  const withOnsets = withStallOnsets(rows, pressureOf(dir)).filter((x) => x[3] && x[4]);
  const lagOf = (x, verdict) => verdict - Number(x[4]);
  const singles = withOnsets.filter((x) => x[0] === 'single').map((x) => lagOf(x, Number(x[3]))).sort((a, b) => a - b);
  const single = singles[Math.floor((singles.length - 1) / 2)];
  const storm = withOnsets.filter((x) => x[0] === 'storm').map((x) => {
    const was = Number(x[3]);
    const at = lateRuleVerdictAt(byUnit.get(x[1]) ?? [], stallMs) ?? was;
    return { unit: x[1], was: lagOf(x, was), would: lagOf(x, Math.min(at, was)) };
  });
  if (storm.length === 0 || single === undefined) throw new Error(`no storm or single session with a verdict and a stall onset in ${dir}`);
  const sooner = storm.filter((s) => s.would < s.was);
  const worst = (key) => storm.reduce((a, b) => (b[key] > a[key] ? b : a));
  const s = (ms) => `${(ms / 1000).toFixed(1)} s`;
  const mean = sooner.length ? sooner.reduce((a, b) => a + b.was - b.would, 0) / sooner.length : 0;
  console.log(`${dir}: the rule at ${s(stallMs)} of stall; ${sooner.length} of ${storm.length} verdicts sooner (by ${s(mean)} on average); from the stall's onset the worst ${s(worst('was').was)} (${(worst('was').was / single).toFixed(2)}× the singles' ${s(single)}, ${worst('was').unit}) would be ${s(worst('would').would)} (${(worst('would').would / single).toFixed(2)}×, ${worst('would').unit})`);
}

if (require.main === module) {
  try {
    const { lateRunStallMs } = require('../dist/stall/detector.js');
    const { parseConfig } = require('../dist/config/load.js');
    const arg = process.argv[3];
    if (arg !== undefined && !(Number(arg) > 0)) throw new Error(`STALL_MS must be a positive number of ms, not "${arg}"`);
    main(process.argv[2] ?? '.', arg === undefined ? lateRunStallMs(parseConfig({}, 'defaults').detector) : Number(arg));
  } catch (err) {
    console.error(`storm-late-rule: ${/** @type {Error} */ (err).message}`);
    process.exit(1);
  }
}

module.exports = { lateRuleVerdictAt };
