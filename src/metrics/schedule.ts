/**
 * When the textfile is written: shortly after a change (one timer, armed only while a change is
 * pending), and once a minute whatever happened (one sbd-wide timer, never one per session), so
 * that the file's age (node_exporter's node_textfile_mtime_seconds) says whether sbd is alive.
 * Writes never overlap: a change during a write is written after it.
 */

/**
 * After a change, the file is written within this. Prometheus scrapes every 15-60 s, so a second
 * is not seen; a storm of incidents (50 sessions standing still at once) costs one write a second.
 */
export const CHANGE_DEBOUNCE_MS = 1_000;

/**
 * Rewritten this often without any change: a file older than a few minutes means sbd is down
 * (the staleness alert). Once a minute is sbd's whole idle cost for its metrics: one wakeup, one
 * small write; sbd's watchdog already wakes it every 15 s.
 */
export const REWRITE_EVERY_MS = 60_000;

export interface ScheduleTimers {
  setTimeout(f: () => void, ms: number): { unref(): unknown };
  clearTimeout(t: unknown): void;
  setInterval(f: () => void, ms: number): { unref(): unknown };
  clearInterval(t: unknown): void;
}

const realTimers: ScheduleTimers = {
  setTimeout: (f, ms) => setTimeout(f, ms),
  clearTimeout: (t) => clearTimeout(t as NodeJS.Timeout),
  setInterval: (f, ms) => setInterval(f, ms),
  clearInterval: (t) => clearInterval(t as NodeJS.Timeout),
};

export class WriteSchedule {
  private pending: { unref(): unknown } | undefined;
  private every: { unref(): unknown } | undefined;
  private writing = false;
  private again = false;
  private closed = false;

  constructor(
    /** One write; its failure is the writer's to report (it is not retried before the next change or minute). */
    private readonly write: () => Promise<void>,
    private readonly timers: ScheduleTimers = realTimers,
  ) {}

  /** Write now, and once a minute from now on. */
  start(): void {
    this.every = this.timers.setInterval(() => this.run(), REWRITE_EVERY_MS);
    this.every.unref(); // sbd lives by its bus, not by this
    this.run();
  }

  /** Something the metrics show changed: written within CHANGE_DEBOUNCE_MS. */
  changed(): void {
    if (this.closed || this.pending) return;
    this.pending = this.timers.setTimeout(() => {
      this.pending = undefined;
      this.run();
    }, CHANGE_DEBOUNCE_MS);
    this.pending.unref();
  }

  private run(): void {
    if (this.closed) return;
    if (this.writing) {
      this.again = true;
      return;
    }
    this.writing = true;
    void this.write()
      .catch(() => undefined)
      .finally(() => {
        this.writing = false;
        if (this.again) {
          this.again = false;
          this.changed();
        }
      });
  }

  /** No more writes (the file is left as it is: its age shows sbd stopped). */
  close(): void {
    this.closed = true;
    if (this.pending) this.timers.clearTimeout(this.pending);
    if (this.every) this.timers.clearInterval(this.every);
    this.pending = undefined;
    this.every = undefined;
  }
}
