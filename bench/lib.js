// @ts-check
'use strict';
// Small benchmark harness: runs a function repeatedly in rounds and reports the median and the
// min-max of the per-round rates. These machines are noisy: compare ratios measured side by side
// in the same run, never absolute figures across runs.
const fs = require('node:fs');
const path = require('node:path');
const zlib = require('node:zlib');
const { performance } = require('node:perf_hooks');

/**
 * @param {() => number} fn   does some work and returns how many operations it did
 * @param {{rounds?: number, minMs?: number}} [o]
 * @returns {{median: number, min: number, max: number}} operations per second
 */
function measure(fn, { rounds = 9, minMs = 200 } = {}) {
  fn(); // warm up
  const rates = [];
  for (let r = 0; r < rounds; r++) {
    let ops = 0;
    const t0 = performance.now();
    let t = t0;
    while (t - t0 < minMs) {
      ops += fn();
      t = performance.now();
    }
    rates.push((ops * 1000) / (t - t0));
  }
  rates.sort((a, b) => a - b);
  return { median: rates[Math.floor(rates.length / 2)], min: rates[0], max: rates[rates.length - 1] };
}

const fmt = (x) => (x >= 1e6 ? `${(x / 1e6).toFixed(2)}M` : x >= 1e3 ? `${(x / 1e3).toFixed(1)}k` : x.toFixed(1));

/** One table row: ours against the baseline, as ops/s (median, min-max) and the ratio of medians. */
function row(name, ours, base) {
  return `| ${name} | ${fmt(ours.median)}/s (${fmt(ours.min)}–${fmt(ours.max)}) | ${fmt(base.median)}/s (${fmt(base.min)}–${fmt(base.max)}) | ${(ours.median / base.median).toFixed(2)}× |`;
}

/** Median, min and max of some numbers (seconds, say); undefined when there are none. */
function spread(xs) {
  if (xs.length === 0) return undefined;
  const s = [...xs].sort((a, b) => a - b);
  return { median: s[Math.floor((s.length - 1) / 2)], min: s[0], max: s[s.length - 1] };
}

/** "4.0 s (3.7–4.3)", or "-" for nothing. */
const secs = (sp) => (sp ? `${sp.median.toFixed(1)} s (${sp.min.toFixed(1)}–${sp.max.toFixed(1)})` : '-');

/** A file's text, gunzipped when its name ends in .gz (the guest runs kept in bench/results/). */
function textOf(file) {
  const raw = fs.readFileSync(file);
  return (file.endsWith('.gz') ? zlib.gunzipSync(raw) : raw).toString('utf8');
}

/** `name` in `dir`, or `name`.gz when only that is there (a kept run); undefined when neither is. */
function keptFile(dir, name) {
  return [name, `${name}.gz`].map((f) => path.join(dir, f)).find((f) => fs.existsSync(f));
}

/** A guest bench's TSV (a header line, then rows) as a markdown table, one line each (pure). */
function tsvAsMarkdown(text) {
  const [head = [], ...rows] = text.trim().split('\n').map((l) => l.split('\t'));
  return [`| ${head.join(' | ')} |`, `|${head.map(() => ' --- ').join('|')}|`, ...rows.map((r) => `| ${r.join(' | ')} |`)];
}

module.exports = { measure, row, fmt, spread, secs, textOf, keptFile, tsvAsMarkdown };
