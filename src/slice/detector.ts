/**
 * The stall detector one level up (design.md §11): a pure step function for a slice. A window is
 * hot when a member stands still (its `full` share at or above the trip line, as for a session),
 * the slice holds anonymous memory (the anon fuse), and the cause is the slice's own brake, its
 * ceiling or the machine, never a member's own brake (that is the member's detector's business).
 * Two hot windows in a row: the slice stands still, the members' sizes at the episode's first hot
 * window are the baseline for the culprit, and a grace runs. With the machine nearly out of memory
 * there is no grace: the kernel's OOM killer is seconds away.
 */
import type { DetectorConfig } from '../config/schema';
import { FALLBACK_GRACE_FACTOR, FALLBACK_GROWTH_CAP_BYTES, FALLBACK_GROWTH_SHARE_OF_BRAKE } from '../stall/detector';

export interface MemberSample {
  /** Relative to the slice: "a.scope", "sub.slice", "sub.slice/b.scope". */
  path: string;
  currentBytes: number;
  /** memory.pressure `full total` (µs). */
  fullUs: number;
  /** When these figures were read, when not at the slice sample's instant: taken from the
   * member's own session feed, whose last sample was fresh (slice/read.ts MemberFigures). */
  atMs?: number;
}

export interface SliceSample {
  /** Monotonic ms. */
  atMs: number;
  currentBytes: number;
  highBytes: number;
  maxBytes: number;
  anonBytes: number;
  shmemBytes: number;
  /** The slice's own memory.events.local counters: its brake and its ceiling breached. */
  highEvents: number;
  maxEvents: number;
  members: MemberSample[];
  memAvailableBytes: number;
  memTotalBytes: number;
  /** false on a kernel without PSI (no memory.pressure): the members' full totals say nothing. */
  psi?: boolean;
  /** false when the members' memory.pressure was not read (membersPressureNeeded): their fullUs are 0. */
  membersPressure?: boolean;
}

export interface SliceLimits {
  /** MemAvailable below this: the machine is short (raise.reserve). */
  reserveBytes: number;
  /** Growth below this is no culprit's (arbitration.culpritMinGrowth): the room the baseline must have had. */
  culpritMinGrowthBytes: number;
  /** MemAvailable below this share of MemTotal: the kernel's OOM killer is seconds away. */
  criticalAvailableShare: number;
}

export type SliceCause = 'slice-brake' | 'slice-ceiling' | 'machine';

export interface SliceWindow {
  kind: 'hot' | 'warm' | 'clear';
  /** The highest `full` share of a member in the window, and which member. */
  share: number;
  stalledMember: string | undefined;
  anonShare: number;
  causes: SliceCause[];
  windowMs: number;
  reason: string;
}

export interface SliceEpisode {
  startedAtMs: number;
  endsAtMs: number;
  cause: SliceCause;
  /** The machine nearly out of memory: act now. */
  critical: boolean;
  currentAtStart: number;
  /** Members' memory.current at the episode's first hot window: the culprit's baseline. */
  membersAtStart: Record<string, number>;
}

/** Members' memory.current at one instant while the slice was not standing still. */
export interface MembersSnapshot {
  atMs: number;
  members: Record<string, number>;
  /** When these sizes were read, when earlier than atMs (a note re-dated by redateNote). */
  readAtMs?: number;
}

export interface SliceState {
  last: SliceSample | undefined;
  /** Recent snapshots from before any stall, oldest first: under a collective brake the greedy
   * member has done its growing by the time the slice stalls, so the baseline must be older. */
  history: MembersSnapshot[];
  hotWindows: number;
  /** Members at the first hot window of the current run of hot windows. */
  baseline: Record<string, number> | undefined;
  episode: SliceEpisode | undefined;
  lastWindow: SliceWindow | undefined;
}

export type SliceEvent = 'first-sample' | 'short-window' | 'window' | 'standing-still' | 'critical' | 'progress' | 'cleared' | 'deadline-expired';

export interface SliceVerdict {
  event: SliceEvent;
  state: 'clear' | 'warm' | 'hot' | 'standing-still';
  window: SliceWindow | undefined;
  episode: SliceEpisode | undefined;
  explain: string;
}

export const initialSliceState = (): SliceState => ({ last: undefined, history: [], hotWindows: 0, baseline: undefined, episode: undefined, lastWindow: undefined });

const pct = (x: number): string => x.toFixed(2);
const mib = (b: number): string => `${Math.round(b / 2 ** 20)} MiB`;
const snapshot = (s: Pick<SliceSample, 'members'>): Record<string, number> => Object.fromEntries(s.members.map((m) => [m.path, m.currentBytes]));

/**
 * How far back the culprit's baseline reaches: the oldest snapshot within this span before the
 * stall. Measured in the guest: a greedy build filled a 320 MiB slice brake within seconds of its
 * start, then grew 1 MiB per 4 s; a minute keeps its start in view while a member that has held
 * steady for a minute counts as not growing.
 */
export const BASELINE_SPAN_MS = 60_000;
/** One snapshot per window is enough: the machine watch may tick much faster on a small machine. */
export const SNAPSHOT_EVERY_MS = 2_000;
/**
 * A 2 s tick may run this much short of 2 s on sbd's clock: libuv times a repeating timer from its
 * loop's cached time, read before the previous note took its own, so a strict 2 s skipped every
 * other tick on a busy sbd and noted every 4 s. A tenth of the tick, far above that jitter.
 */
export const TICK_SLACK_MS = SNAPSHOT_EVERY_MS / 10;
/**
 * A member that joins the slice is noted at once, unless a note is younger than this: a new
 * session is where growth starts, and a greedy build filled a 320 MiB brake within one 2 s tick
 * of its scope's start (CI, guest 36). Half a second bounds a burst of new sessions (bench:storm
 * makes 200 in 30 s) to two reads of the members a second.
 */
export const JOIN_NOTE_MIN_MS = 500;

/** Whether noteMembers would take a note at `atMs` (pure): asked before the members are read. */
export function noteWanted(s: SliceState, atMs: number, minGapMs = SNAPSHOT_EVERY_MS - TICK_SLACK_MS): boolean {
  if (s.episode || s.hotWindows > 0) return false;
  const newest = s.history[s.history.length - 1];
  return !(newest && atMs - newest.atMs < minGapMs && atMs >= newest.atMs);
}

/** Remember the members' sizes at `atMs` (pure): snapshots older than the span are dropped, and
 * none is kept while the slice stands still (its baseline is already chosen), nor within
 * `minGapMs` of the newest. */
export function noteMembers(s: SliceState, atMs: number, members: ReadonlyArray<{ path: string; currentBytes: number }>, minGapMs = SNAPSHOT_EVERY_MS - TICK_SLACK_MS): SliceState {
  if (!noteWanted(s, atMs, minGapMs)) return s;
  const history = s.history.filter((h) => atMs - h.atMs <= BASELINE_SPAN_MS && h.atMs < atMs);
  history.push({ atMs, members: snapshot({ members: members as MemberSample[] }) });
  return { ...s, history };
}

/**
 * A steady slice's note is re-dated rather than read again at most this long after its sizes
 * were read: ten times the 30 s of a steady re-read, so an idle slice of a thousand members reads
 * them every 5 minutes, not twice a minute (issue 15: the member walk was half of an idle sbd's
 * CPU at 1,000 sessions); sizes at most this old, in a slice whose total and members have not
 * changed meanwhile.
 */
export const REDATE_UP_TO_MS = 300_000;

/**
 * The newest note re-dated to `atMs` (pure), for a steady slice: its members are still the ones
 * the note lists (`paths`, listed without reading them), and the note's sizes were read less
 * than REDATE_UP_TO_MS ago. Undefined when a read is needed: no note, another set of members
 * (one came or went: its growth or its leaving would be missed), the sizes too old, or during an
 * episode (no notes then). The caller re-dates only while the slice's total stayed within a
 * quarter of the culprit's minimum growth of the note's: a member then moved more only if another
 * moved the other way as much, which is what a read every 30 s would see and this does not.
 */
export function redateNote(s: SliceState, atMs: number, paths: readonly string[]): SliceState | undefined {
  if (s.episode || s.hotWindows > 0) return undefined;
  const newest = s.history[s.history.length - 1];
  if (!newest || atMs < newest.atMs) return undefined;
  const readAtMs = newest.readAtMs ?? newest.atMs;
  if (atMs - readAtMs >= REDATE_UP_TO_MS) return undefined;
  const noted = Object.keys(newest.members);
  if (noted.length !== paths.length || paths.some((p) => !(p in newest.members))) return undefined;
  const history = s.history.filter((h) => atMs - h.atMs <= BASELINE_SPAN_MS && h.atMs < atMs);
  history.push({ atMs, members: newest.members, readAtMs });
  return { ...s, history };
}

/** What binds the slice for `cause` (pure): its brake or ceiling, or what the machine leaves it. */
export function limitFor(cause: SliceCause | undefined, s: SliceSample): number {
  if (cause === 'slice-brake' && s.highBytes !== Infinity) return s.highBytes;
  if (cause === 'slice-ceiling' && s.maxBytes !== Infinity) return s.maxBytes;
  return s.currentBytes + s.memAvailableBytes;
}

const topLevelTotal = (m: Record<string, number>): number => Object.entries(m).reduce((n, [p, b]) => (p.includes('/') ? n : n + b), 0);

/**
 * The baseline for a stall seen first in `sample`: the latest snapshot within the span in which
 * the slice still had room for the minimum growth under the limit that now binds (whoever filled
 * that room is the one that grew); else the oldest within the span; else the sample before.
 * Measured in the guest: with the oldest snapshot alone, an innocent that had started 30 s before
 * the greedy one (and settled since) counted as growing more.
 */
function baselineAt(s: SliceState, sample: SliceSample, cause: SliceCause | undefined, l: SliceLimits, fallback: SliceSample): Record<string, number> {
  const inSpan = s.history.filter((h) => sample.atMs - h.atMs <= BASELINE_SPAN_MS && h.atMs <= sample.atMs);
  const roomy = limitFor(cause, sample) - l.culpritMinGrowthBytes;
  const withRoom = inSpan.filter((h) => topLevelTotal(h.members) <= roomy);
  return (withRoom[withRoom.length - 1] ?? inSpan[0])?.members ?? snapshot(fallback);
}

export const isCritical = (s: SliceSample, l: SliceLimits): boolean => s.memAvailableBytes < l.criticalAvailableShare * s.memTotalBytes;

/** What binds the slice now: its own brake, its ceiling, the machine (pure). */
export function causesOf(a: SliceSample, b: SliceSample, cfg: DetectorConfig, l: SliceLimits): SliceCause[] {
  const causes: SliceCause[] = [];
  if (b.highEvents > a.highEvents || (b.highBytes !== Infinity && b.currentBytes >= cfg.nearOwnBrake * b.highBytes)) causes.push('slice-brake');
  if (b.maxEvents > a.maxEvents || (b.maxBytes !== Infinity && b.currentBytes >= cfg.nearOwnBrake * b.maxBytes)) causes.push('slice-ceiling');
  if (b.memAvailableBytes < l.reserveBytes) causes.push('machine');
  return causes;
}

/** MemAvailable under this many times raise.reserve: the machine may run short within a window
 * (a storm of allocations fills gigabytes a second), so the members' pressure is read. */
export const MACHINE_NEAR_RESERVE_FACTOR = 2;

/**
 * Does the window that starts at `own` need the members' memory.pressure? (pure) A window is
 * judged on the members' stall only when something binds the slice (causesOf: its brake, its
 * ceiling, the machine); otherwise it is clear whatever they say. So they are read when a cause
 * binds now, when the slice has a brake or a ceiling (nearOwnBrake may be crossed within a
 * window), when the machine is within MACHINE_NEAR_RESERVE_FACTOR of its reserve, or when it is
 * critical: a slice of 200 sessions with none of these reads 200 files a window, not 400 (issue
 * 15, item 5). Should a cause appear unforeseen, that window is warm, and the next is judged.
 */
export function membersPressureNeeded(last: SliceSample | undefined, own: Omit<SliceSample, 'members'>, cfg: DetectorConfig, l: SliceLimits): boolean {
  if (own.psi === false) return false; // the fallback measure judges the slice's own figures
  if (own.highBytes !== Infinity || own.maxBytes !== Infinity) return true;
  if (own.memAvailableBytes < MACHINE_NEAR_RESERVE_FACTOR * l.reserveBytes || isCritical({ ...own, members: [] }, l)) return true;
  return causesOf(last ?? { ...own, members: [] }, { ...own, members: [] }, cfg, l).length > 0;
}

/** Classify the window from `a` to `b` (pure). */
export function classifySliceWindow(a: SliceSample, b: SliceSample, cfg: DetectorConfig, l: SliceLimits): SliceWindow {
  const windowMs = b.atMs - a.atMs;
  const before = new Map(a.members.map((m) => [m.path, m]));
  // The members' stall is known only when their pressure was read at both ends.
  const pressureRead = a.membersPressure !== false && b.membersPressure !== false;
  let share = 0;
  let stalledMember: string | undefined;
  for (const m of pressureRead ? b.members : []) {
    const was = before.get(m.path);
    // each member over its own span: its figures may come from its session feed's last sample
    const spanMs = (m.atMs ?? b.atMs) - (was?.atMs ?? a.atMs);
    if (was === undefined || m.fullUs < was.fullUs || spanMs <= 0) continue; // new member, a new cgroup behind its name, or no time between its readings
    const s = (m.fullUs - was.fullUs) / (spanMs * 1000);
    if (s > share) [share, stalledMember] = [s, m.path];
  }
  const anonShare = b.currentBytes > 0 ? Math.min(1, (b.anonBytes + b.shmemBytes) / b.currentBytes) : 0;
  const causes = causesOf(a, b, cfg, l);
  const base = { share, stalledMember, anonShare, causes, windowMs };
  if (isCritical(b, l)) return { ...base, kind: 'hot', causes: causes.includes('machine') ? causes : [...causes, 'machine'], reason: `MemAvailable ${mib(b.memAvailableBytes)} below ${pct(l.criticalAvailableShare)} of the machine` };
  if (b.psi === false) {
    // Without PSI, design.md §4's fallback one level up: the slice's own brake or ceiling fired
    // and it grew less than min(1 % of its limit, 16 MiB): hot; it grew more: clear; else warm.
    const grew = b.currentBytes - a.currentBytes;
    const fired = b.highEvents - a.highEvents + (b.maxEvents - a.maxEvents);
    const limit = Math.min(FALLBACK_GROWTH_SHARE_OF_BRAKE * limitFor(causes[0], b), FALLBACK_GROWTH_CAP_BYTES);
    if (anonShare < cfg.anonFuse) return { ...base, kind: 'clear', reason: `no PSI; anon share ${pct(anonShare)} below ${cfg.anonFuse}: page cache` };
    if (grew >= limit) return { ...base, kind: 'clear', reason: `no PSI; grew ${mib(grew)}` };
    if (fired > 0) return { ...base, kind: 'hot', reason: `no PSI; the slice's brake fired ${fired}x, grew only ${mib(grew)}` };
    return { ...base, kind: 'warm', reason: "no PSI; the slice's brake did not fire, nor did it grow" };
  }
  if (!pressureRead) {
    if (causes.length === 0) return { ...base, kind: 'clear', reason: "neither the slice's brake nor its ceiling nor the machine binds (the members' pressure not read)" };
    return { ...base, kind: 'warm', reason: "the members' pressure was not read at the window's start (nothing bound the slice then): the next window is judged" };
  }
  if (share < cfg.clearShare) return { ...base, kind: 'clear', reason: `no member stalls (highest full share ${pct(share)})` };
  if (anonShare < cfg.anonFuse) return { ...base, kind: 'clear', reason: `anon share ${pct(anonShare)} below ${cfg.anonFuse}: page cache` };
  if (causes.length === 0) return { ...base, kind: 'clear', reason: "neither the slice's brake nor its ceiling nor the machine binds (a member's own brake is its own detector's business)" };
  if (share >= cfg.tripShare) return { ...base, kind: 'hot', reason: `${stalledMember ?? '?'} stalls at full share ${pct(share)}` };
  return { ...base, kind: 'warm', reason: `highest full share ${pct(share)} between ${cfg.clearShare} and ${cfg.tripShare}` };
}

function verdict(event: SliceEvent, w: SliceWindow | undefined, s: SliceState): SliceVerdict {
  const state = s.episode ? 'standing-still' : w?.kind === 'hot' ? 'hot' : w?.kind === 'warm' ? 'warm' : 'clear';
  const parts: string[] = [event];
  if (w) parts.push(`${w.kind}: ${w.reason}`, `causes ${w.causes.join('+') || 'none'}`, `anon ${pct(w.anonShare)}`);
  parts.push(`hot windows ${s.hotWindows}`);
  return { event, state, window: w, episode: s.episode, explain: parts.join('; ') };
}

function begin(s: SliceState, sample: SliceSample, w: SliceWindow | undefined, graceMs: number, critical: boolean, l: SliceLimits): SliceState {
  const cause: SliceCause = critical ? 'machine' : (w?.causes[0] ?? 'machine');
  const episode: SliceEpisode = { startedAtMs: sample.atMs, endsAtMs: sample.atMs + (critical ? 0 : graceMs), cause, critical, currentAtStart: sample.currentBytes, membersAtStart: s.baseline ?? baselineAt(s, sample, cause, l, sample) };
  return { ...s, episode };
}

/** One step: the slice's state after `sample`, and what it means. */
export function stepSlice(state: SliceState, sample: SliceSample, cfg: DetectorConfig, l: SliceLimits): [SliceState, SliceVerdict] {
  const last = state.last;
  if (last === undefined) {
    // The machine nearly out of memory needs no window to be seen: MemAvailable says it.
    if (isCritical(sample, l) && !state.episode) {
      const s = begin({ ...state, last: sample }, sample, undefined, 0, true, l);
      return [s, verdict('critical', undefined, s)];
    }
    return [{ ...state, last: sample }, verdict('first-sample', undefined, state)];
  }
  if (sample.atMs - last.atMs < (cfg.windowS * 1000) / 2 && !isCritical(sample, l)) return [state, verdict('short-window', undefined, state)];
  const w = classifySliceWindow(last, sample, cfg, l);
  let s: SliceState = { ...state, last: sample, lastWindow: w };
  const critical = isCritical(sample, l);

  if (s.episode) {
    if (critical && !s.episode.critical) {
      s = { ...s, episode: { ...s.episode, critical: true, cause: 'machine', endsAtMs: sample.atMs } };
      return [s, verdict('critical', w, s)];
    }
    // Progress: the slice gave back memory since the episode began (a member finished or freed).
    if (s.episode.currentAtStart - sample.currentBytes >= cfg.progressDrop && !critical) {
      s = { ...s, episode: undefined, hotWindows: 0, baseline: undefined };
      return [s, verdict('progress', w, s)];
    }
    if (w.kind === 'clear') {
      s = { ...s, episode: undefined, hotWindows: 0, baseline: undefined };
      return [s, verdict('cleared', w, s)];
    }
    if (sample.atMs >= s.episode.endsAtMs) return [s, verdict('deadline-expired', w, s)];
    return [s, verdict('window', w, s)];
  }

  if (w.kind === 'hot') s = { ...s, hotWindows: s.hotWindows + 1, baseline: s.baseline ?? baselineAt(s, sample, w.causes[0], l, last) };
  else {
    if (w.kind === 'clear') s = { ...s, hotWindows: 0, baseline: undefined };
    s = noteMembers(s, sample.atMs, sample.members);
  }
  if (critical) {
    s = begin(s, sample, w, 0, true, l);
    return [s, verdict('critical', w, s)];
  }
  if (s.hotWindows >= cfg.hotWindowsToStall) {
    s = begin(s, sample, w, cfg.graceS * 1000 * (sample.psi === false ? FALLBACK_GRACE_FACTOR : 1), false, l);
    return [s, verdict('standing-still', w, s)];
  }
  return [s, verdict('window', w, s)];
}

/** After the culprit's command was stopped or the slice's brake raised: the episode starts over. */
export function resetSliceEpisode(s: SliceState): SliceState {
  return { ...s, hotWindows: 0, baseline: undefined, episode: undefined, history: [] };
}
