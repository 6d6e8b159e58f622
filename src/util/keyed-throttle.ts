/**
 * A task per key run at most once per `everyMs`, and once more after the last call of a burst
 * (a trailing run, with the latest task): a file that changes many times a second is read a few
 * times a second at most, and its last change is never missed. Timed on the monotonic clock.
 */
import { monotonicMs } from './clock';

export class KeyedThrottle {
  private readonly lastRunMs = new Map<string, number>();
  private readonly trailing = new Map<string, { timer: NodeJS.Timeout; task: () => void }>();

  constructor(
    private readonly everyMs: number,
    private readonly now: () => number = monotonicMs,
  ) {}

  run(key: string, task: () => void): void {
    const waiting = this.trailing.get(key);
    if (waiting) {
      waiting.task = task; // the trailing run takes the latest
      return;
    }
    const sinceMs = this.now() - (this.lastRunMs.get(key) ?? -Infinity);
    if (sinceMs >= this.everyMs) {
      this.lastRunMs.set(key, this.now());
      task();
      return;
    }
    const timer = setTimeout(() => {
      const t = this.trailing.get(key);
      this.trailing.delete(key);
      this.lastRunMs.set(key, this.now());
      t?.task();
    }, this.everyMs - sinceMs);
    timer.unref();
    this.trailing.set(key, { timer, task });
  }

  /** The key is going: its trailing run, if one waits, now; then nothing kept. */
  flush(key: string): void {
    const t = this.trailing.get(key);
    this.forget(key);
    t?.task();
  }

  /** The key is gone: no trailing run, nothing kept. */
  forget(key: string): void {
    const t = this.trailing.get(key);
    if (t) clearTimeout(t.timer);
    this.trailing.delete(key);
    this.lastRunMs.delete(key);
  }
}
