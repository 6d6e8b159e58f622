/**
 * The stall detector (design.md §4): a pure function of (state, sample, config) to (state,
 * verdict). It knows nothing of files, timers or signals; the feed brings samples and acts on
 * verdicts. Every rule of design.md §4 is here, each named; the tests remove them one by one.
 */
import type { MemorySample } from '../cgroup/read';
import type { DetectorConfig } from '../config/schema';

/** How the window's pressure was measured: PSI totals, or the fallback without PSI (design.md §4). */
export type Measure = 'psi' | 'fallback';

/** One sample as the detector sees it: the cgroup's figures plus what surrounds it. */
export interface DetectorSample extends MemorySample {
  /** Units (cgroups) under this session's slice: sessions, other scopes or services, nested
   * slices, itself included. Alone, it can only be its own cause. */
  unitsInSlice: number;
  measure: Measure;
  /** Which windows the feed was taking when it took this sample (cadenceOf); undefined: steady. */
  cadence?: Cadence;
}

/**
 * Which windows are judged. `onset`: from a PSI wake to a verdict, short windows (onsetWindowS),
 * onsetHotWindows of them hot in a row make a stall. `steady`: windowS (fallbackIntervalS on a
 * timer) and hotWindowsToStall, as design.md §4 has it: timer sampling, and every window while a
 * deadline runs (one short blip must not end a deadline that took minutes).
 */
export type Cadence = 'onset' | 'steady';

/** The cadence a feed takes its next window at: short only while woken by PSI and no deadline runs. */
export function cadenceOf(state: DetectorState, feed: 'psi' | 'timer'): Cadence {
  return feed === 'psi' && state.deadline === undefined ? 'onset' : 'steady';
}

/** How long the window of that cadence is, in ms. */
export function windowMsOf(cadence: Cadence, feed: 'psi' | 'timer', cfg: DetectorConfig): number {
  if (cadence === 'onset') return cfg.onsetWindowS * 1000;
  return (feed === 'timer' ? cfg.fallbackIntervalS : cfg.windowS) * 1000;
}

export type WindowKind = 'hot' | 'warm' | 'clear';

/** Why a window counts as the session's own doing (or [] when it does not). */
export type Evidence = 'own-high-moved' | 'near-own-brake' | 'alone-in-slice';

export interface WindowVerdict {
  kind: WindowKind;
  /** Δ full-stall µs / window µs (PSI); undefined on the fallback measure. */
  share: number | undefined;
  /** Δ cpu.pressure some µs / window µs: how much of the window its tasks waited for a CPU;
   * undefined without cpu.pressure (no PSI, a trace or fixture without it). */
  cpuShare?: number;
  anonShare: number;
  evidence: Evidence[];
  /** Times its own brake fired during the window. */
  ownHighDelta: number;
  grewBytes: number;
  windowMs: number;
  /** A warm window only for its tasks' wait for a CPU (detector.cpuStarvedShare). */
  starved?: true;
  /** Why the window is what it is, in a few words. */
  reason: string;
}

/** Its times are the samples' clock: CLOCK_MONOTONIC ms in sbd (util/clock.ts), never the wall clock. */
export interface Deadline {
  startedAtMs: number;
  endsAtMs: number;
  /** memory.current when the deadline started: a drop of progressDrop below it is progress. */
  currentAtStart: number;
}

export interface DetectorState {
  /** The sample the next window starts from. */
  last: DetectorSample | undefined;
  hotWindows: number;
  deadline: Deadline | undefined;
  /** No window counts before this (after we lowered the brake ourselves). */
  mutedUntilMs: number;
  /** The last full window, for status. */
  lastWindow: WindowVerdict | undefined;
  /**
   * The episode's onset: where the first hot window of the current run of hot windows began
   * (the sample it started from; for a session woken by its PSI trigger, the wake). undefined
   * while no window is hot. The samples' clock (monotonic ms).
   */
  onsetMs: number | undefined;
  /** The full stall the current run's hot windows measured, in ms (share × window): 0 while no window is hot (lateRunStandsStill). */
  hotStallMs: number;
}

export type Event =
  | 'first-sample'
  | 'new-cgroup'
  | 'short-window'
  | 'muted'
  | 'window'
  | 'standing-still'
  | 'progress'
  | 'cleared'
  | 'deadline-expired'
  | 'near-memory-max';

export interface Verdict {
  event: Event;
  /** clear / warm / hot / standing-still: the session's state after this sample. */
  state: 'clear' | 'warm' | 'hot' | 'standing-still';
  window: WindowVerdict | undefined;
  hotWindows: number;
  deadlineRemainingMs: number | undefined;
  /** On a standing-still verdict: the episode's onset (DetectorState.onsetMs); the verdict's own time is the sample's atMs. */
  onsetMs?: number;
  /** One line a person can read: the figures and the rule that decided. */
  explain: string;
}

/** The fields of a run of hot windows, as they are while there is none. */
const NO_RUN = { hotWindows: 0, onsetMs: undefined, hotStallMs: 0 } as const satisfies Partial<DetectorState>;

export const initialState = (): DetectorState => ({ last: undefined, deadline: undefined, mutedUntilMs: 0, lastWindow: undefined, ...NO_RUN });

/** Fallback rule: "grew less than min(1 % of the brake, 16 MiB)" counts as not growing. */
export const FALLBACK_GROWTH_SHARE_OF_BRAKE = 0.01;
export const FALLBACK_GROWTH_CAP_BYTES = 16 * 2 ** 20;
/** On the fallback measure the grace period is doubled: its evidence is coarser. */
export const FALLBACK_GRACE_FACTOR = 2;

const pct = (x: number | undefined): string => (x === undefined ? '-' : x.toFixed(2));

/** Classify one window from `a` to `b` (pure). */
export function classifyWindow(a: DetectorSample, b: DetectorSample, cfg: DetectorConfig): WindowVerdict {
  const windowMs = b.atMs - a.atMs;
  const ownHighDelta = b.ownHighEvents - a.ownHighEvents;
  const grewBytes = b.currentBytes - a.currentBytes;
  const anonShare = b.currentBytes > 0 ? Math.min(1, (b.anonBytes + b.shmemBytes) / b.currentBytes) : 0;
  const evidence: Evidence[] = [];
  if (ownHighDelta > 0) evidence.push('own-high-moved');
  if (b.highBytes !== Infinity && b.currentBytes >= cfg.nearOwnBrake * b.highBytes) evidence.push('near-own-brake');
  if (b.unitsInSlice <= 1) evidence.push('alone-in-slice');
  const base = { anonShare, evidence, ownHighDelta, grewBytes, windowMs };

  // Anon fuse: below it the brake grinds page cache, which the kernel takes back without a real stall.
  const fuseHolds = anonShare >= cfg.anonFuse;

  if (b.measure === 'fallback') {
    const limit = Math.min(FALLBACK_GROWTH_SHARE_OF_BRAKE * b.highBytes, FALLBACK_GROWTH_CAP_BYTES);
    if (!fuseHolds) return { ...base, kind: 'clear', share: undefined, reason: 'anon fuse open (page cache)' };
    // Clear when it grew more; neither grown nor braked is warm: it keeps a running deadline.
    if (grewBytes >= limit) return { ...base, kind: 'clear', share: undefined, reason: `grew ${grewBytes} B` };
    if (ownHighDelta > 0) return { ...base, kind: 'hot', share: undefined, reason: `own brake fired ${ownHighDelta}x, grew only ${grewBytes} B` };
    return { ...base, kind: 'warm', share: undefined, reason: `own brake did not fire, grew only ${grewBytes} B` };
  }

  const share = windowMs > 0 ? (b.pressureFullUs - a.pressureFullUs) / (windowMs * 1000) : 0;
  const cpuShare = a.cpuSomeUs === undefined || b.cpuSomeUs === undefined || windowMs <= 0 ? undefined : (b.cpuSomeUs - a.cpuSomeUs) / (windowMs * 1000);
  const psi = cpuShare === undefined ? { ...base, share } : { ...base, share, cpuShare };
  if (share < cfg.clearShare) {
    // Waiting in the run queue is neither a memory stall nor progress: a window of a session
    // that would otherwise count (its anon at the fuse, its own brake) tells nothing.
    if (cpuShare !== undefined && cpuShare >= cfg.cpuStarvedShare && fuseHolds && evidence.length > 0) {
      return { ...psi, kind: 'warm', starved: true, reason: `share ${pct(share)} below ${cfg.clearShare} while it waited for a CPU ${pct(cpuShare)} of the window: no evidence` };
    }
    return { ...psi, kind: 'clear', reason: `share ${pct(share)} below ${cfg.clearShare}` };
  }
  if (!fuseHolds) return { ...psi, kind: 'clear', reason: `anon share ${pct(anonShare)} below ${cfg.anonFuse}: page cache` };
  // Its own doing: pressure also counts stalls of an ancestor's brake; an innocent neighbour is never punished.
  if (evidence.length === 0) return { ...psi, kind: 'clear', reason: 'not its own brake (neighbour or slice)' };
  if (share >= cfg.tripShare) return { ...psi, kind: 'hot', reason: `share ${pct(share)} at or above ${cfg.tripShare}` };
  return { ...psi, kind: 'warm', reason: `share ${pct(share)} between ${cfg.clearShare} and ${cfg.tripShare}` };
}

/**
 * A CPU-starved window (classifyWindow's warm "waited for a CPU") right after another one counts
 * as clear (pure). One is bridged: in bench:storm's 200 sessions on two CPUs, a stall paused for
 * one window, then went on (session 26's traces). Two in a row are a second of no evidence, and
 * a run of hot windows must not join two bursts across it, nor a deadline outlast it.
 */
export function bridgeOnce(w: WindowVerdict, previous: WindowVerdict | undefined): WindowVerdict {
  if (w.starved !== true || previous?.starved !== true) return w;
  const { starved: _starved, ...rest } = w;
  return { ...rest, kind: 'clear', reason: `${w.reason}, the second window in a row: clear` };
}

function remaining(d: Deadline | undefined, now: number): number | undefined {
  return d === undefined ? undefined : Math.max(0, d.endsAtMs - now);
}

function describe(event: Event, w: WindowVerdict | undefined, s: DetectorState, now: number): string {
  const parts: string[] = [event];
  if (w) {
    parts.push(`${w.kind}: ${w.reason}`, `share ${pct(w.share)}`, `anon ${pct(w.anonShare)}`, `evidence ${w.evidence.join('+') || 'none'}`);
  }
  // the run's stall, which a late run stands still on (lateRunStandsStill)
  if (s.hotWindows > 0 && s.hotStallMs > 0) parts.push(`stalled ${(s.hotStallMs / 1000).toFixed(2)} s in the run`);
  parts.push(`hot windows ${s.hotWindows}`);
  const left = remaining(s.deadline, now);
  if (left !== undefined) parts.push(`deadline in ${Math.round(left / 1000)} s`);
  return parts.join('; ');
}

/**
 * The verdict of one step. Its `explain` is written when first read, once: every sample of every
 * awake feed has a verdict, and only an incident or a debug line reads the words (writing them
 * each time was 4 % of a sample's CPU in the storm's profile, session 18).
 */
function verdict(event: Event, w: WindowVerdict | undefined, s: DetectorState, now: number): Verdict {
  const state = s.deadline !== undefined ? 'standing-still' : w?.kind === 'hot' ? 'hot' : w?.kind === 'warm' ? 'warm' : s.hotWindows > 0 ? 'hot' : 'clear';
  let explain: string | undefined;
  return {
    event, state, window: w, hotWindows: s.hotWindows, deadlineRemainingMs: remaining(s.deadline, now),
    get explain(): string {
      explain ??= describe(event, w, s, now);
      return explain;
    },
  };
}

/** One step: the state after `sample`, and what it means. */
export function step(state: DetectorState, sample: DetectorSample, cfg: DetectorConfig): [DetectorState, Verdict] {
  const now = sample.atMs;
  const last = state.last;
  if (last === undefined) {
    const s = { ...state, last: sample };
    return [s, verdict('first-sample', undefined, s, now)];
  }
  // New cgroup, fresh start: counters that go backwards belong to a new cgroup behind the same name.
  if (sample.pressureFullUs < last.pressureFullUs || sample.ownHighEvents < last.ownHighEvents) {
    const s = { ...initialState(), last: sample };
    return [s, verdict('new-cgroup', undefined, s, now)];
  }
  // A window shorter than half the nominal one is noise: keep the old sample.
  const onset = sample.cadence === 'onset';
  const nominalMs = (onset ? cfg.onsetWindowS : cfg.windowS) * 1000;
  if (sample.atMs - last.atMs < nominalMs / 2) return [state, verdict('short-window', undefined, state, now)];

  const w = bridgeOnce(classifyWindow(last, sample, cfg), state.lastWindow);
  let s: DetectorState = { ...state, last: sample, lastWindow: w };

  // Mute after our own lowering: lowering a live cgroup's brake manufactures exactly this signal.
  if (now < s.mutedUntilMs) {
    s = { ...s, ...NO_RUN, deadline: undefined };
    return [s, verdict('muted', w, s, now)];
  }

  if (s.deadline !== undefined) {
    // Progress clears: a real drop of memory since the deadline started. New output does not count.
    if (s.deadline.currentAtStart - sample.currentBytes >= cfg.progressDrop) {
      s = { ...s, ...NO_RUN, deadline: undefined };
      return [s, verdict('progress', w, s, now)];
    }
    // The wall outranks the grace, and a clear window too: over its brake this near MemoryMax,
    // the brake is not holding, and the kernel's OOM kill would take the whole scope.
    if (nearMemoryMax(sample, cfg)) return [s, verdict('near-memory-max', w, s, now)];
    if (w.kind === 'clear') {
      s = { ...s, ...NO_RUN, deadline: undefined };
      return [s, verdict('cleared', w, s, now)];
    }
    if (now >= s.deadline.endsAtMs) return [s, verdict('deadline-expired', w, s, now)];
    return [s, verdict('window', w, s, now)];
  }

  // The onset is where the run's first hot window began: the sample it was measured from.
  if (w.kind === 'hot') s = { ...s, hotWindows: s.hotWindows + 1, onsetMs: s.hotWindows === 0 || s.onsetMs === undefined ? last.atMs : s.onsetMs, hotStallMs: s.hotStallMs + stallMsOf(w) };
  else if (w.kind === 'clear') s = { ...s, ...NO_RUN };
  // (warm neither starts nor ends anything)

  // Hot windows in a row before a session counts as standing still (two 2 s ones, or three 0.5 s onset ones),
  // judged on a hot window only: a feed that turns from onset windows to steady ones under load
  // (stall/feed.ts cadenceUnderLoad) brings two hot onset windows to a count of two, and a warm
  // steady window after them stood still on the steady count without a stall in it (session 18's review).
  if (w.kind === 'hot' && (s.hotWindows >= (onset ? cfg.onsetHotWindows : cfg.hotWindowsToStall) || (onset && lateRunStandsStill(s, cfg)))) {
    const grace = cfg.graceS * 1000 * (sample.measure === 'fallback' ? FALLBACK_GRACE_FACTOR : 1);
    s = { ...s, deadline: { startedAtMs: now, endsAtMs: now + grace, currentAtStart: sample.currentBytes } };
    const v = verdict('standing-still', w, s, now);
    return [s, s.onsetMs === undefined ? v : { ...v, onsetMs: s.onsetMs }];
  }
  return [s, verdict('window', w, s, now)];
}

/** The full stall a window measured, in ms (0 on the fallback measure, which has no share). */
function stallMsOf(w: Pick<WindowVerdict, 'share' | 'windowMs'>): number {
  return w.share === undefined ? 0 : w.share * w.windowMs;
}

/**
 * Hot onset windows in a row that may stand still before onsetHotWindows of them, when they are
 * late (lateRunStandsStill). Two: one hot window can be a burst (hotWindowsToStall's reason).
 */
export const LATE_RUN_HOT_WINDOWS = 2;

/**
 * The full stall a run of onset windows must hold to stand still in LATE_RUN_HOT_WINDOWS windows,
 * in ms (pure): the shortest stall that onsetHotWindows on-time windows always catch, however it
 * falls across them, (onsetHotWindows - 1 + 2 × tripShare) × onsetWindowS (1.2 s): just under a
 * trip share of a window before them, onsetHotWindows - 1 whole ones, a trip share of the last.
 * So the late rule calls nothing a stall that on-time windows would have let pass (a cgroup's
 * full stall is at most the wall time it lasted), and on time it never decides before the count:
 * two windows hold 1 s at most.
 */
export function lateRunStallMs(cfg: Pick<DetectorConfig, 'onsetHotWindows' | 'onsetWindowS' | 'tripShare'>): number {
  return (cfg.onsetHotWindows - 1 + 2 * cfg.tripShare) * cfg.onsetWindowS * 1000;
}

/**
 * Whether a run of hot onset windows stands still before its count (pure): at least
 * LATE_RUN_HOT_WINDOWS of them that between them measured lateRunStallMs of full stall. Under
 * load sbd takes its windows late (bench:storm: 0.6-1.3 s each where 0.5 s were due), and the
 * slowest verdicts of a storm waited for a third window after two that had held a stall the
 * on-time windows always catch (issue 15 item 5). The meaning stays the seed's: a share at or
 * above the trip line in every window of the run, sustained as long as the on-time rule needs.
 */
export function lateRunStandsStill(s: Pick<DetectorState, 'hotWindows' | 'hotStallMs'>, cfg: Pick<DetectorConfig, 'onsetHotWindows' | 'onsetWindowS' | 'tripShare'>): boolean {
  return s.hotWindows >= LATE_RUN_HOT_WINDOWS && s.hotStallMs >= lateRunStallMs(cfg);
}

/**
 * Whether the session is over its own brake with less than detector.nearMemoryMax left below its
 * MemoryMax (pure; never without one).
 */
export function nearMemoryMax(m: Pick<MemorySample, 'currentBytes' | 'highBytes' | 'maxBytes'>, cfg: Pick<DetectorConfig, 'nearMemoryMax'>): boolean {
  return m.currentBytes > m.highBytes && m.maxBytes - m.currentBytes < cfg.nearMemoryMax; // no MemoryMax: Infinity, never near
}

/** After we lowered the session's brake ourselves: stay quiet for muteAfterLowerS. */
export function muteAfterLowering(state: DetectorState, nowMs: number, cfg: DetectorConfig): DetectorState {
  return { ...state, ...NO_RUN, deadline: undefined, mutedUntilMs: nowMs + cfg.muteAfterLowerS * 1000 };
}

/** After the biggest command was stopped, or the brake raised: the episode starts over. */
export function resetEpisode(state: DetectorState): DetectorState {
  return { ...state, ...NO_RUN, deadline: undefined };
}

/**
 * The own-brake hint wakes a feed at most this often: every two onset windows (1 s), capped at a
 * window. A brake grinding page cache moves its counter all the time, so the feed is then awake
 * for one onset window in two at most; a stall that begins while it sleeps waits half as long as
 * at 2 s (the quiet-host bench:detect: most wakes were hints, 2 s apart, the trigger later).
 */
export function hintPaceMs(cfg: Pick<DetectorConfig, 'onsetWindowS' | 'windowS'>): number {
  return Math.min(cfg.windowS, 2 * cfg.onsetWindowS) * 1000;
}

/**
 * Whether a wake at `nowMs` ends a window begun at the sample taken before the feed slept, at
 * `sleptAtMs` (pure): yes when it slept no longer than a window (detector.windowS). A stall that
 * began during a short sleep is then judged from that sample, not from a fresh one a window later
 * (with the hint every second most sleeps last half a second: bench:detect); a longer sleep is
 * never averaged into one window. The shortest burst that can make three onset windows hot stays
 * 0.7 s: the longer first window needs as large a share of its length.
 */
export function resumeFrom(sleptAtMs: number, nowMs: number, cfg: Pick<DetectorConfig, 'windowS'>): boolean {
  return nowMs >= sleptAtMs && nowMs - sleptAtMs <= cfg.windowS * 1000;
}

/**
 * Whether the session pressed its own brake during a window with anonymous memory filling it
 * (pure): its memory.events.local `high` moved in the window, and its anon share is at the fuse
 * (detector.anonFuse). A clear window of such a session does not put its feed to sleep: a
 * stall may begin at any moment, and a feed asleep saw it only at the next hint, up to hintPaceMs
 * later, then often judged a window diluted by the sleep (the quiet-host bench:detect of session
 * 11: in all 10 wedges the stall began while the feed slept between hints). A brake pressed by
 * page cache (anon under the fuse, whose windows are never hot) lets its feed sleep as before.
 */
export function pressedInWindow(w: Pick<WindowVerdict, 'ownHighDelta' | 'anonShare'> | undefined, cfg: Pick<DetectorConfig, 'anonFuse'>): boolean {
  return w !== undefined && w.ownHighDelta > 0 && w.anonShare >= cfg.anonFuse;
}
