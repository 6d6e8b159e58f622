// @ts-check
'use strict';
// Replays a recorded trace through the detector as the PSI feed (src/stall/feed.ts) would take
// it: asleep until its trigger would fire (full stall of at least clearShare of the trigger's
// window within the last windowS, at most once per window: psi.rst) or its own brake fired
// (memory.events.local's `high` moved; a hint, at most once per hintPaceMs: SessionFeed.hint);
// then one sample per window at the cadence the state asks for (cadenceOf, windowMsOf); asleep
// again after a clear window with no deadline in which the trigger did not fire nor anonymous
// memory pressed its own brake, once the trigger's own window has passed since it last fired. The recorder samples every 250 ms, so a sample is
// the first record at or after the window's end less half a round.
const { step, initialState, cadenceOf, windowMsOf, hintPaceMs, resumeFrom, pressedInWindow } = require('../../dist/stall/detector.js');
const { toSample } = require('./traces.js');

const HALF_ROUND_MS = 125;

/**
 * @param {Array<any>} records a trace's records (loadTrace)
 * @param {string} unit the scope to replay
 * @param {any} cfg the detector config
 * @param {{ lateMs?: number }} [opts] `lateMs`: every window after a wake's first sample comes this
 *   much later than due, as when sbd runs behind its feeds (bench:storm)
 * @returns {Array<any>} every verdict, with `t` (the sample's time), the wake times as
 *   `{ event: 'wake', t, why }`
 */
function replayFeed(records, unit, cfg, opts = {}) {
  const aliveAt = (t) => new Set(records.filter((x) => !x.gone && Math.abs(x.t_ms - t) < HALF_ROUND_MS).map((x) => x.unit)).size;
  const own = records.filter((r) => r.unit === unit && !r.gone);
  const out = [];
  let state = initialState();
  let awake = false;
  let nextAt = 0;
  let firedAt = -Infinity;
  let hintAt = -Infinity;
  let sleptFrom;
  let windowFrom = 0;
  for (let i = 0; i < own.length; i++) {
    const r = own[i];
    // the kernel's trigger, awake or not: at most once per window
    const back = own.findLast((x) => x.t_ms <= r.t_ms - cfg.windowS * 1000) ?? own[0];
    const fired = r.t_ms - firedAt >= cfg.windowS * 1000 && r.pressure_full_us - back.pressure_full_us >= cfg.clearShare * cfg.windowS * 1e6;
    if (fired) firedAt = r.t_ms;
    if (!awake) {
      const hint = !fired && r.t_ms - hintAt >= hintPaceMs(cfg) && i > 0 && r.events_local.high > own[i - 1].events_local.high;
      if (hint) hintAt = r.t_ms;
      if (!fired && !hint) continue;
      awake = true;
      out.push({ event: 'wake', t: r.t_ms, why: fired ? 'psi-trigger' : 'own brake fired' });
      // after a short sleep the wake's sample ends a window begun before it (SessionFeed.wake)
      if (sleptFrom !== undefined && resumeFrom(sleptFrom.atMs, r.t_ms, cfg)) {
        state = { ...state, last: sleptFrom };
        windowFrom = sleptFrom.atMs;
      }
      sleptFrom = undefined;
    } else if (r.t_ms < nextAt - HALF_ROUND_MS) continue;
    const cadence = cadenceOf(state, 'psi');
    const from = windowFrom;
    const [next, v] = step(state, { ...toSample(r, aliveAt(r.t_ms)), cadence }, cfg);
    state = next;
    windowFrom = state.last?.atMs ?? r.t_ms; // a short window keeps its older sample, as the feed's state does
    out.push({ t: r.t_ms, cadence, ...v });
    // asleep after a clear window, unless the trigger fired during it or within its own window
    // before (it cannot fire again sooner), or anonymous memory pressed its own brake during it (SessionFeed.sample)
    if (v.window !== undefined && v.state === 'clear' && state.deadline === undefined && firedAt <= from && r.t_ms - firedAt >= cfg.windowS * 1000 && !pressedInWindow(v.window, cfg)) {
      awake = false;
      sleptFrom = state.last;
      state = { ...state, last: undefined };
    } else nextAt = r.t_ms + windowMsOf(cadenceOf(state, 'psi'), 'psi', cfg) + (opts.lateMs ?? 0);
  }
  return out;
}

/**
 * The stalls of a trace: runs of 250 ms records whose full share is at or above `share`, with
 * when each began and ended and its stalled time (µs of full stall) — the ground truth a verdict
 * is judged against.
 */
function stallsOf(records, unit, share) {
  const own = records.filter((r) => r.unit === unit && !r.gone);
  const runs = [];
  let run;
  for (let i = 1; i < own.length; i++) {
    const dt = own[i].t_ms - own[i - 1].t_ms;
    const stalled = own[i].pressure_full_us - own[i - 1].pressure_full_us;
    if (dt > 0 && stalled / (dt * 1000) >= share) {
      if (!run) run = { fromMs: own[i - 1].t_ms, toMs: own[i].t_ms, stalledUs: 0 };
      run.toMs = own[i].t_ms;
      run.stalledUs += stalled;
    } else if (run) {
      runs.push(run);
      run = undefined;
    }
  }
  if (run) runs.push(run);
  return runs;
}

/**
 * Each stall of a trace (stallsOf at the clear line: a stall lasts while its 250 ms share is not
 * clear) with the verdict the feed reached on it: `caughtAtMs`, the first standing-still verdict
 * from its start to one steady window after its end, or undefined (ignored as a burst). `opts` as
 * replayFeed's.
 */
function judgeStalls(records, unit, cfg, opts = {}) {
  const still = replayFeed(records, unit, cfg, opts).filter((v) => v.event === 'standing-still');
  return stallsOf(records, unit, cfg.clearShare).map((st) => ({
    ...st,
    lengthMs: st.toMs - st.fromMs,
    caughtAtMs: still.find((v) => v.t >= st.fromMs && v.t <= st.toMs + cfg.windowS * 1000)?.t,
  }));
}

/** The margin on judged stalls: the longest one ignored and the shortest one caught (lengths in ms). */
function marginOf(judged) {
  const ignored = judged.filter((j) => j.caughtAtMs === undefined).map((j) => j.lengthMs);
  const caught = judged.filter((j) => j.caughtAtMs !== undefined).map((j) => j.lengthMs);
  return {
    longestIgnoredMs: ignored.length ? Math.max(...ignored) : undefined,
    shortestCaughtMs: caught.length ? Math.min(...caught) : undefined,
  };
}

module.exports = { replayFeed, stallsOf, judgeStalls, marginOf };
