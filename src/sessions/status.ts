/** The status report: what `sbctl status` shows and `Status()` returns, as plain data. */
import { CgroupGoneError } from '../cgroup/read';
import { type SessionSnapshot, snapshotSession } from './snapshot';

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
    return { name: s.id, unit: s.unit, state, deadlineS, lastAction, feed, ...snapshotSession(s.cgroupDir, s.heartbeat, nowMs) };
  } catch (err) {
    if (err instanceof CgroupGoneError) return undefined;
    throw err;
  }
}
