#!/usr/bin/env node
// @ts-check
'use strict';
// Where onset → verdict goes, wedge by wedge: reads a bench:detect run made with
// SBD_LOG_LEVEL=debug (its detect.tsv and sbd-VARIANT.log) and prints, for each wedge, when sbd
// woke (and why), each trigger fire while awake, each window it judged, where the kernel's count says the stall began
// and the verdict, in seconds after the onset (its brake reached), then
// the medians of onset → wake and wake → verdict.
//   node bench/detect-timeline.js RESULTS_DIR [VARIANT]     (VARIANT: feed, the default)
const fs = require('node:fs');
const path = require('node:path');
const { spread, secs } = require('./lib');

/**
 * The wedges' timelines (pure): `tsv` is detect.tsv's text, `log` sbd's journal (pino JSON a
 * line). Each wedge: its name, onset (ms), wake and verdict (s after the onset, or null) and its
 * windows ({ atS, verdict, state, explain }).
 */
function timelines(tsv, log, variant) {
  const entries = log.split('\n').filter((l) => l.startsWith('{')).map((l) => JSON.parse(l));
  const rows = tsv.trim().split('\n').slice(1).map((l) => l.split('\t')).filter((x) => x[0] === variant);
  return rows.map(([, name, onsetText, , , , , stallText]) => {
    const onset = Number(onsetText);
    const unit = `${name}.scope`;
    const at = (e) => (Date.parse(e.time) - onset) / 1000;
    const mine = entries.filter((e) => e.unit === unit || (typeof e.dir === 'string' && e.dir.endsWith(`/${unit}`)));
    const wake = mine.find((e) => e.msg === 'waking' && at(e) > -5);
    const windows = mine.filter((e) => e.event === 'verdict' && at(e) > -5).map((e) => ({ atS: at(e), verdict: e.verdict, state: e.state, explain: e.explain }));
    const still = windows.find((w) => w.verdict === 'standing-still');
    const until = still ? still.atS : Infinity;
    // every wake (and why) and every trigger fire while awake, up to the verdict
    const marks = mine.filter((e) => (e.msg === 'waking' || e.msg === 'psi trigger fired') && at(e) > -5 && at(e) <= until).map((e) => ({ atS: at(e), mark: e.msg === 'waking' ? `wake (${e.why})` : 'trigger fired, awake' }));
    return { name, onset, stallS: stallText ? (Number(stallText) - onset) / 1000 : null, wakeS: wake ? at(wake) : null, wakeWhy: wake?.why ?? null, verdictS: still ? still.atS : null, windows: windows.slice(0, still ? windows.indexOf(still) + 1 : 12), marks };
  });
}

function main() {
  const dir = process.argv[2];
  const variant = process.argv[3] ?? 'feed';
  if (!dir) {
    console.error('usage: node bench/detect-timeline.js RESULTS_DIR [VARIANT]  (a bench:detect run with SBD_LOG_LEVEL=debug)');
    process.exit(2);
  }
  const logFile = path.join(dir, `sbd-${variant}.log`);
  if (!fs.existsSync(logFile)) {
    console.error(`detect-timeline: ${logFile} is missing: run bench:detect with SBD_LOG_LEVEL=debug`);
    process.exit(2);
  }
  const all = timelines(fs.readFileSync(path.join(dir, 'detect.tsv'), 'utf8'), fs.readFileSync(logFile, 'utf8'), variant);
  for (const t of all) {
    console.log(`${t.name}: wake ${t.wakeS?.toFixed(2) ?? '-'} s (${t.wakeWhy ?? '-'}), stall onset ${t.stallS?.toFixed(2) ?? '-'} s, verdict ${t.verdictS?.toFixed(2) ?? '-'} s`);
    const rows = [...t.windows.map((w) => ({ atS: w.atS, text: `${w.verdict.padEnd(15)} ${w.state.padEnd(15)} ${w.explain}` })), ...t.marks.map((m) => ({ atS: m.atS, text: `  ${m.mark}` }))];
    for (const r of rows.sort((a, b) => a.atS - b.atS)) console.log(`  ${r.atS.toFixed(2).padStart(6)} s  ${r.text}`);
  }
  const of = (f) => all.map(f).filter((x) => x !== null);
  console.log(`\nonset → wake ${secs(spread(of((t) => t.wakeS)))}; wake → verdict ${secs(spread(of((t) => (t.verdictS !== null && t.wakeS !== null ? t.verdictS - t.wakeS : null))))}; onset → verdict ${secs(spread(of((t) => t.verdictS)))}`);
}

if (require.main === module) main();
module.exports = { timelines };
