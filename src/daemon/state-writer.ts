/**
 * The state file's writes, coalesced (issue 15, item 5: 200 sessions reaching their brakes within
 * 10 s gave 200 durable writes, two fsyncs each, on sbd's one thread). A change that only starts,
 * moves or ends a deadline is written with whatever else changed within COALESCE_MS; a change
 * that records an action (a stop under way, its processes, the brake before a raise) is written
 * at once, before the action goes on, with everything pending. stop() (sbd's orderly exit, as on
 * `systemctl restart`) writes what is pending. One timer for the file, never one per session.
 */
import type { SavedSession, SavedState } from './state-file';

/**
 * How long a deadline's change may wait for others to share its write. A deadline begins after
 * two hot windows, and sbd restarted from a SIGKILL within this span starts it again at its next
 * verdict (the session still stands still, its trigger fires again): that deadline ends this much
 * later at most, plus the new detection. Half a second makes a storm's 200 verdicts at most 20
 * writes in 10 s.
 */
export const COALESCE_MS = 500;

/** Must this change of one session's record be written before sbd goes on? (pure) Yes when what
 * it records of an action or of the freeze signals told differs (a signal is told once: its
 * record is written before it is told, and signals are rare); a deadline alone (begun, moved,
 * ended) may wait. */
export function mustWriteNow(before: SavedSession | undefined, after: SavedSession | undefined): boolean {
  const action = (s: SavedSession | undefined): string => JSON.stringify([s?.originalHigh ?? null, s?.stopping ?? false, s?.stop ?? null, s === undefined ? null : s.invocationId, s?.freeze ?? null]);
  const deadlineOnly = (s: SavedSession | undefined): boolean => s === undefined || (s.originalHigh === undefined && !s.stopping && s.stop === undefined && s.freeze === undefined);
  // A record that appears or goes with a deadline alone in it: a deadline's change.
  if (deadlineOnly(before) && deadlineOnly(after)) return false;
  return action(before) !== action(after);
}

export interface StateWriterDeps {
  /** Write the whole state durably (saveState); may throw. */
  write(state: SavedState): void;
  onError(err: unknown): void;
  /** setTimeout, unless a test passes its own. */
  setTimer?(fn: () => void, ms: number): { unref?(): void };
  clearTimer?(t: unknown): void;
}

export class StateWriter {
  /** Each session's record as last asked for (JSON), to skip a save that changes nothing. */
  private readonly asked = new Map<string, string>();
  /** Something asked for is not written yet. */
  private dirty = false;
  private timer: unknown;
  /** Writes done (for tests). */
  writes = 0;

  constructor(
    /** The state as loaded; this writer owns it from here on. */
    readonly state: SavedState,
    private readonly deps: StateWriterDeps,
  ) {
    for (const [unit, s] of Object.entries(state)) this.asked.set(unit, JSON.stringify(s));
  }

  /** Set (or with undefined, drop) one session's record. */
  save(unit: string, s: SavedSession | undefined, { batched = false }: { batched?: boolean } = {}): void {
    const json = JSON.stringify(s ?? null);
    if ((this.asked.get(unit) ?? 'null') === json) return;
    this.asked.set(unit, json);
    const before = this.state[unit];
    if (s === undefined) delete this.state[unit];
    else this.state[unit] = s;
    this.dirty = true;
    // batched: the caller flushes once for many such changes before it goes on (the freeze watch's round)
    if (mustWriteNow(before, s) && !batched) return this.flush();
    if (this.timer === undefined) {
      const t = (this.deps.setTimer ?? setTimeout)(() => {
        this.timer = undefined;
        this.flush();
      }, COALESCE_MS);
      this.timer = t;
    }
  }

  /** Write now what is pending (nothing when nothing is). */
  flush(): void {
    if (this.timer !== undefined) {
      (this.deps.clearTimer ?? ((t) => clearTimeout(t as NodeJS.Timeout)))(this.timer);
      this.timer = undefined;
    }
    if (!this.dirty) return;
    try {
      this.deps.write(this.state);
      this.writes++;
      this.dirty = false;
    } catch (err) {
      this.deps.onError(err); // still dirty: the next change or stop() tries again
    }
  }

  /** sbd stops: what is pending is written. */
  stop(): void {
    this.flush();
  }
}
