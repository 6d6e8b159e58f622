/** The status report: what `sbctl status` shows and `Status()` returns, as plain data. */
import { CgroupGoneError } from '../cgroup/read';
import { type SessionFigures, type SessionSnapshot, snapshotSession } from './snapshot';

export type FeedMode = 'psi' | 'sampling' | 'mixed' | 'none';

export interface ServiceHealth {
  running: boolean;
  pid: number | null;
  version: string;
  uptimeS: number | null;
  /** How sessions are watched: PSI triggers, timer sampling (no PSI or no permission), or both. */
  feed: FeedMode;
  observeOnly: boolean;
  slices: string[];
  /** While sbd adopts the sessions that were there when it started (after READY=1, when there are
   * thousands): the units read so far of those listed (listed: null while systemd lists them).
   * Absent once done. */
  adopting?: { adopted: number; listed: number | null };
}

export interface SessionRow extends SessionSnapshot {
  name: string;
  unit: string;
  /** ok, warm, hot, standing-still, stopping; "unwatched" when sbd is not running. */
  state: string;
  /** Seconds left before the biggest command is stopped, while standing still. */
  deadlineS: number | null;
  lastAction: string | null;
  /** How sbd feeds its detector: "psi", "sampling (no PSI)", "sampling (no PSI trigger)"; null when sbd is not running. */
  feed: string | null;
  /**
   * Seconds since the figures read from the cgroup and /proc (memory, limits, pressure,
   * processes, biggest) were read: sbd answers from its last reading (src/daemon/status-figures.ts);
   * 0 when read for this answer; null when unknown (an older sbd's typed list). The state,
   * deadline, last action and heartbeat are always of the moment.
   */
  sampleAgeS: number | null;
}

/** A slice sbd arbitrates between its members (design.md §11), and the machine's room. */
export interface SliceRow {
  slice: string;
  /** ok, warm, hot, standing-still. */
  state: string;
  /** What binds while it stands still: slice-brake, slice-ceiling, machine. */
  cause: string | null;
  currentBytes: number;
  highBytes: number;
  maxBytes: number;
  memAvailableBytes: number;
  /** Each member (a unit or a nested slice): now, growth since the episode began, fair share. */
  members: Array<{ path: string; currentBytes: number; growthBytes: number; fairShareBytes: number }>;
  /** Who was judged the culprit, by which rule, with the figures; null when none. */
  culprit: { path: string; rule: string; why: string } | null;
  /** Seconds before the culprit's biggest command is stopped. */
  deadlineS: number | null;
  lastAction: string | null;
  /** "psi", or what wakes it without a PSI trigger (a kernel without PSI). */
  feed?: string;
  /** Seconds since its figures and its members' were read (sbd's last reading, or its feed's last sample); absent from an older sbd's typed list. */
  sampleAgeS?: number;
}

export interface StatusReport {
  service: ServiceHealth;
  sessions: SessionRow[];
  /** Absent when sbd is not running or does not arbitrate slices. */
  slices?: SliceRow[];
}

export interface RowSource {
  unit: string;
  id: string;
  cgroupDir: string;
  heartbeat: string | undefined;
}

/** A row for one session; undefined when its cgroup vanished meanwhile (the session ended). */
export function sessionRow(s: RowSource, state: string, deadlineS: number | null, lastAction: string | null, nowMs: number, feed: string | null = null): SessionRow | undefined {
  try {
    return { name: s.id, unit: s.unit, state, deadlineS, lastAction, feed, ...snapshotSession(s.cgroupDir, s.heartbeat, nowMs), sampleAgeS: 0 };
  } catch (err) {
    if (err instanceof CgroupGoneError) return undefined;
    throw err;
  }
}

/** What sbd knows of a session at the moment of the answer (never read from its files). */
export interface LiveState {
  state: string;
  deadlineS: number | null;
  lastAction: string | null;
  feed: string | null;
}

/** sbd's row: its live state, the figures as last read and how old they are (pure). */
export function rowFrom(s: Pick<RowSource, 'unit' | 'id'>, live: LiveState, figures: SessionFigures, heartbeatAgeS: number | null, sampleAgeS: number): SessionRow {
  return { name: s.id, unit: s.unit, state: live.state, deadlineS: live.deadlineS, lastAction: live.lastAction, feed: live.feed, ...figures, heartbeatAgeS, sampleAgeS };
}
