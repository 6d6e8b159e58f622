// @ts-check
'use strict';
// Where the stall sbd judged began, as the kernel counted it (bench/guest/wedge.js, issue 15
// item 1). A command does not stall the instant its memory reaches the brake: the kernel's
// throttling grows with the overage, and the full-stall share climbs over seconds. So besides
// "brake reached → verdict", bench:detect times "stall onset → verdict": the start of the stall
// that holds the verdict, a stall being what bench:margin calls one on the recorded traces (a run
// of 250 ms spans whose full-stall share is at or above the clear line).
const { stallsOf } = require('../test/support/feed-replay.js');

/**
 * A cumulative counter read at uneven times, put on a grid of `binMs` from its first reading
 * (linear between readings, pure): records as the traces have them ({ unit, t_ms, pressure_full_us }).
 */
function onGrid(samples, binMs, unit = 'wedge') {
  const out = [];
  if (samples.length === 0) return out;
  let i = 0;
  for (let t = samples[0].atMs; t <= samples[samples.length - 1].atMs; t += binMs) {
    while (i + 1 < samples.length && samples[i + 1].atMs < t) i++;
    const a = samples[i];
    const b = samples[Math.min(i + 1, samples.length - 1)];
    const f = b.atMs > a.atMs ? (t - a.atMs) / (b.atMs - a.atMs) : 0;
    out.push({ unit, t_ms: t, pressure_full_us: a.fullUs + f * (b.fullUs - a.fullUs) });
  }
  return out;
}

/**
 * The start (ms) of the stall that holds `verdictMs` (pure): the run of `binMs` spans at or above
 * `share` in which the verdict falls, or which ended one span before it, or which was still on
 * when the readings ended before the verdict (the bench stops reading once it has seen the
 * verdict, and under load its reads came up to 1.3 s apart: three wedges of ten in a quiet run
 * ended 0.2-0.4 s before theirs); undefined when none.
 * `samples`: [{ atMs, fullUs }], the scope's memory.pressure full total as read.
 */
function stallOnset(samples, verdictMs, { binMs = 250, share = 0.1 } = {}) {
  const grid = onGrid(samples, binMs);
  const runs = stallsOf(grid, 'wedge', share);
  const lastMs = grid.length > 0 ? grid[grid.length - 1].t_ms : -Infinity;
  const onAtEnd = (r) => r.toMs >= lastMs && lastMs < verdictMs;
  return runs.find((r) => r.fromMs <= verdictMs && (verdictMs <= r.toMs + binMs || onAtEnd(r)))?.fromMs;
}

module.exports = { onGrid, stallOnset };
