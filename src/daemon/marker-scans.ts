/**
 * The leftover reaper's marker scans, gathered: every session whose agent exits within
 * MARKER_SCAN_GATHER_MS of another's shares one pass over /proc (proc/scan.ts markedWithAny).
 * The pass runs on a timer, so the event loop (and sbd's watchdog) gets its turn between passes
 * however many sessions end together.
 */
import { markedWithAny } from '../proc/scan';
import type { ProcInfo } from '../proc/table';

/**
 * How long a scan waits for others to join it: systemd stops the scopes of a batch (a storm's,
 * a user's logout) within a fraction of a second of each other, and a leftover lives this much
 * longer at most; 0.25 s keeps both small.
 */
export const MARKER_SCAN_GATHER_MS = 250;

interface Waiter {
  resolve: (procs: ProcInfo[]) => void;
  reject: (err: unknown) => void;
}

export class MarkerScans {
  private waiting = new Map<string, Waiter[]>();
  private timer: NodeJS.Timeout | undefined;
  /** Passes over /proc made (for the tests and the log). */
  passes = 0;

  constructor(private readonly scan: (ids: ReadonlySet<string>) => Map<string, ProcInfo[]> = markedWithAny) {}

  /** This user's processes marked with session `id` (not its monitors'), after the next pass. */
  find(id: string): Promise<ProcInfo[]> {
    return new Promise((resolve, reject) => {
      const list = this.waiting.get(id);
      if (list) list.push({ resolve, reject });
      else this.waiting.set(id, [{ resolve, reject }]);
      this.timer ??= setTimeout(() => this.pass(), MARKER_SCAN_GATHER_MS);
    });
  }

  private pass(): void {
    const waiting = this.waiting;
    this.waiting = new Map();
    this.timer = undefined;
    this.passes++;
    let found: Map<string, ProcInfo[]>;
    try {
      found = this.scan(new Set(waiting.keys()));
    } catch (err) {
      for (const list of waiting.values()) for (const w of list) w.reject(err);
      return;
    }
    for (const [id, list] of waiting) for (const w of list) w.resolve(found.get(id) ?? []);
  }
}
