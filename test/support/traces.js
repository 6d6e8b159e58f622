// @ts-check
'use strict';
// Replays the recorded traces (test/fixtures/traces, from the Debian guest) as detector samples.
const fs = require('node:fs');
const path = require('node:path');

const dir = path.resolve(__dirname, '../fixtures/traces');

/** @returns {Array<any>} the raw records of a trace */
function loadTrace(name) {
  return fs.readFileSync(path.join(dir, `${name}.jsonl`), 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l));
}

const limit = (v) => (v === 'max' ? Infinity : Number(v));

/** A detector sample from a trace record; `unitsInSlice` counts the units alive at that instant. */
function toSample(r, unitsInSlice, measure = 'psi') {
  return {
    atMs: r.t_ms, currentBytes: r.current, highBytes: limit(r.high), maxBytes: limit(r.max), swapMaxBytes: 0,
    anonBytes: r.anon, shmemBytes: r.shmem, fileBytes: r.file, ownHighEvents: r.events_local.high,
    pressureFullUs: r.pressure_full_us, pressureSomeUs: r.pressure_some_us, cpuUsageUs: r.cpu_usage_us,
    unitsInSlice, measure,
  };
}

/**
 * Samples of `unit` every `everyMs` (the records nearest each boundary), as the feed would take
 * them; each with the number of the trace's units alive at that instant.
 */
function samplesOf(records, unit, everyMs = 2000, measure = 'psi') {
  // The recorder samples every unit once per 250 ms round: units alive within half a round of t.
  const aliveAt = (t) => new Set(records.filter((x) => !x.gone && Math.abs(x.t_ms - t) < 125).map((x) => x.unit)).size;
  const out = [];
  let next = 0;
  for (const r of records) {
    if (r.unit !== unit || r.gone || r.t_ms < next) continue;
    out.push(toSample(r, aliveAt(r.t_ms), measure));
    next = r.t_ms + everyMs - 125;
  }
  return out;
}

module.exports = { loadTrace, samplesOf, toSample };
