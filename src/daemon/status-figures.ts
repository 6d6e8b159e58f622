/**
 * The figures status shows for each session (memory, limits, pressure, processes, the biggest
 * command) and each slice (its figures and every member's), as sbd last read them. Reading them is most of what a status call cost: seven cgroup
 * files and a /proc file a process, for every session, anew on each call (3.4 s a call for 500
 * sessions in the lab's emulated guest, profiled for issue 15). So sbd answers from its last
 * reading, each row saying how old it is, and reads again after answering, off the call:
 * - a session never read, or read longer ago than STALE_LIMIT_MS, is read before the answer;
 * - after each answer, those read longer ago than REREAD_AFTER_MS are read again for the next one,
 *   REREAD_PAUSE_MS later (a call that needs a reading ends the pause);
 * - reading goes SESSIONS_PER_TURN sessions per turn of the event loop, and no longer than
 *   TURN_BUDGET_MS, so even 2,000 sessions never hold up the detector's windows, the watchdog or
 *   another D-Bus call for long.
 * - in a storm (deferReread: many feeds awake at once) the re-read waits until it is over; in
 *   bench:storm the re-read after the bench's own status call took 420-480 ms of each half second
 *   of sbd's main thread for the storm's first 3 s, 10 ms turns or not (profile, session 26).
 * Nothing runs between status calls: an idle sbd reads nothing (issue 15: wakeups stay flat).
 */
import { CgroupGoneError } from '../cgroup/read';

/**
 * Figures older than this are read again before the answer: half a minute, so that a status
 * call after a quiet spell never shows memory from long ago, while a person's or a script's
 * repeated calls are answered at once from the previous call's reading.
 */
export const STALE_LIMIT_MS = 30_000;
/** Figures younger than this are not read again after an answer: one detector window (2 s), so
 * that a loop of status calls costs sbd at most one reading of each session a window. */
export const REREAD_AFTER_MS = 2_000;
/**
 * Sessions read per turn of the event loop: a session's reading is about 0.4 ms on a desktop
 * and 7 ms under the lab's emulation, so a turn stays under ~0.1 s there and reading 2,000
 * sessions never blocks the loop longer than that.
 */
export const SESSIONS_PER_TURN = 16;
/**
 * A turn of reading ends once it took this long, whatever its count: the timers of the feeds'
 * 0.5 s onset windows run between turns, and 10 ms holds a window back by 2 % at most. Under the
 * emulation 16 sessions took ~110 ms a turn (a fifth of a window; profile, issue 15 session 26).
 */
export const TURN_BUDGET_MS = 10;
/**
 * The re-read after an answer starts this long after it: the caller's own work on the answer
 * (sbctl parses 500 rows and prints them, a few hundred ms under the lab's emulation) then has the
 * machine's CPU to itself; a re-read at once took it on a guest of 2 vCPUs (issue 15's profile:
 * a call right after another cost 2.90x `node -e 0` against 2.61x).
 */
export const REREAD_PAUSE_MS = 1_000;

/** A session (its unit), or a slice (its unit name too), and its cgroup directory. */
export interface FiguresSource {
  unit: string;
  cgroupDir: string;
}

export interface Reading<T> {
  figures: T;
  /** When they were read: the monotonic clock, ms. */
  atMs: number;
}

export interface FiguresDeps<T> {
  /** Reads one cgroup's figures; throws CgroupGoneError when it vanished. */
  read(dir: string): T;
  /** The monotonic clock, ms (util/clock.ts). */
  now(): number;
  /** Yields one turn of the event loop (setImmediate; tests pass their own). */
  turn(): Promise<void>;
  /** Waits `ms` (an unref'd timer by default; tests pass their own). */
  sleep?(ms: number): Promise<void>;
  /**
   * Whether the re-read for the next answer waits now (sbd in a storm: the feeds' windows come
   * first); asked again every REREAD_PAUSE_MS. A reading an answer needs is never kept waiting.
   */
  deferReread?(): boolean;
}

const unrefSleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms).unref());

/** Which sessions must be read before answering, and which after (pure). */
export function plan(sessions: readonly FiguresSource[], readings: ReadonlyMap<string, { atMs: number }>, nowMs: number): { before: FiguresSource[]; after: FiguresSource[] } {
  const before: FiguresSource[] = [];
  const after: FiguresSource[] = [];
  for (const s of sessions) {
    const r = readings.get(s.unit);
    if (r === undefined || nowMs - r.atMs > STALE_LIMIT_MS) before.push(s);
    else if (nowMs - r.atMs > REREAD_AFTER_MS) after.push(s);
  }
  return { before, after };
}

/** The readings of one kind of row: sessions' figures (SessionFigures), or slices' samples. */
export class StatusFigures<T> {
  private readonly readings = new Map<string, Reading<T>>();
  /** Sessions to read before an answer can go out, then those to read for the next one. */
  private readonly urgent = new Map<string, FiguresSource>();
  private readonly later = new Map<string, FiguresSource>();
  private draining: Promise<void> | undefined;
  private waiters: Array<{ resolve: () => void; reject: (err: unknown) => void }> = [];
  /** Ends the pause before a re-read: a call needs a reading now. */
  private endPause: (() => void) | undefined;
  /** An answer went out since the last pause: the re-read for the next one waits first. */
  private pauseDue = false;

  constructor(private readonly deps: FiguresDeps<T>) {}

  /**
   * The last reading of each session (read first where there is none or it is too old); a
   * session whose cgroup vanished meanwhile has none. Schedules the reading for the next call.
   */
  async get(sessions: readonly FiguresSource[]): Promise<ReadonlyMap<string, Reading<T>>> {
    const { before, after } = plan(sessions, this.readings, this.deps.now());
    if (before.length > 0) {
      for (const s of before) {
        this.later.delete(s.unit);
        this.urgent.set(s.unit, s);
      }
      await new Promise<void>((resolve, reject) => {
        this.waiters.push({ resolve, reject });
        this.endPause?.();
        this.drain();
      });
    }
    const answer = new Map(this.readings);
    for (const s of after) if (!this.urgent.has(s.unit)) this.later.set(s.unit, s);
    if (this.later.size > 0) {
      this.pauseDue = true;
      this.drain();
    }
    return answer;
  }

  /** A reading taken elsewhere (a feed's sample, on the same clock): kept when newer than ours. */
  note(unit: string, figures: T, atMs: number): void {
    const had = this.readings.get(unit);
    if (had === undefined || had.atMs < atMs) this.readings.set(unit, { figures, atMs });
  }

  /** The session ended: its reading goes, and it is read no more. */
  forget(unit: string): void {
    this.readings.delete(unit);
    this.urgent.delete(unit);
    this.later.delete(unit);
  }

  private drain(): void {
    this.draining ??= this.run().finally(() => {
      this.draining = undefined;
      if (this.urgent.size + this.later.size > 0) this.drain(); // queued as the last turn ended
    });
  }

  private async run(): Promise<void> {
    while (this.urgent.size + this.later.size > 0) {
      if (this.urgent.size === 0 && (this.pauseDue || this.deps.deferReread?.() === true)) {
        // for the next answer: this one goes out, and its caller does its work, first; and in a
        // storm the feeds' samples have sbd's CPU (the next call reads what went stale itself)
        this.pauseDue = false;
        await Promise.race([(this.deps.sleep ?? unrefSleep)(REREAD_PAUSE_MS), new Promise<void>((resolve) => (this.endPause = resolve))]);
        this.endPause = undefined;
        continue;
      }
      const queue = this.urgent.size > 0 ? this.urgent : this.later;
      const turnEndsAt = this.deps.now() + TURN_BUDGET_MS;
      let n = 0;
      let failed: unknown;
      for (const [unit, s] of queue) {
        queue.delete(unit);
        try {
          this.readings.set(unit, { figures: this.deps.read(s.cgroupDir), atMs: this.deps.now() });
        } catch (err) {
          this.readings.delete(unit);
          if (!(err instanceof CgroupGoneError)) failed ??= err; // gone: the session ended, no row
        }
        if (++n === SESSIONS_PER_TURN || this.deps.now() >= turnEndsAt) break;
      }
      if (failed !== undefined || this.urgent.size === 0) this.settle(failed);
      await this.deps.turn();
    }
    this.settle(undefined);
  }

  /** The answers waiting for the urgent reading may go (or fail with what went wrong). */
  private settle(err: unknown): void {
    const waiters = this.waiters;
    this.waiters = [];
    for (const w of waiters) (err === undefined ? w.resolve() : w.reject(err));
  }
}
