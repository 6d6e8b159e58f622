/**
 * The awake feeds' due windows, taken in slices with the event loop's I/O polled between them.
 *
 * A feed's window timer only queues its sample here; the queue takes the samples due, in the order
 * they came due, for SAMPLE_SLICE_MS at most, then yields to the loop (setImmediate) and goes on.
 * Node runs every expired timer of a timers phase before it polls for I/O: with each feed sampling
 * straight from its own timer, a storm's 100 and more due samples held the loop a whole phase,
 * and the kernel's news waited behind them, a PSI trigger's or an own brake's wake that starts a
 * stalling session's windows among it (bench:storm, session 32: woken 1.3-1.6 s after its brake
 * was breached, where the harness, reading the same inotify notices, saw the breach at once).
 * A wake samples at once in its I/O callback; the windows of feeds awake already wait for it.
 */
import { monotonicMs } from '../util/clock';

/**
 * How long the queue takes samples before it lets the loop poll for I/O, in ms. A sample takes
 * 1-2 ms of CPU in the TCG guest under a storm (bench:storm's sbd-timing: feed.read 1.65 ms,
 * detector step and controller 2.5 ms) and 0.1 ms on a host: 20 ms is 5-10 samples in the guest
 * between two polls, so a wake waits for 20 ms of windows at most, not for every window due;
 * a yield costs one setImmediate, a few µs, so slices this short cost the samples nothing.
 */
export const SAMPLE_SLICE_MS = 20;

export interface SampleQueueOptions {
  /** The slice, in ms (SAMPLE_SLICE_MS). */
  sliceMs?: number;
  /** The clock the slice is measured on (CLOCK_MONOTONIC ms). */
  now?: () => number;
  /** Runs the next slice after the loop polled for I/O (setImmediate; tests pass their own). */
  defer?: (next: () => void) => void;
}

export class SampleQueue {
  /** The samples due, each feed's once however often its timer fired: a Set keeps the order they came due in. */
  private readonly due = new Set<() => void>();
  private deferred = false;
  private readonly sliceMs: number;
  private readonly now: () => number;
  private readonly defer: (next: () => void) => void;

  constructor(options: SampleQueueOptions = {}) {
    this.sliceMs = options.sliceMs ?? SAMPLE_SLICE_MS;
    this.now = options.now ?? monotonicMs;
    this.defer = options.defer ?? ((next) => void setImmediate(next));
  }

  /** Samples waiting for their slice. */
  get size(): number {
    return this.due.size;
  }

  /** Queue a sample (a feed's own function, the same each time: queued twice, it runs once). */
  push(take: () => void): void {
    this.due.add(take);
    this.schedule();
  }

  /** Take a sample out of the queue (its feed went to sleep or stopped); false when it was not queued. */
  delete(take: () => void): boolean {
    return this.due.delete(take);
  }

  private schedule(): void {
    if (this.deferred || this.due.size === 0) return;
    this.deferred = true;
    this.defer(() => this.slice());
  }

  /** One slice: due samples in order until SAMPLE_SLICE_MS went by, then the rest after a poll. */
  private slice(): void {
    this.deferred = false;
    const until = this.now() + this.sliceMs;
    try {
      for (const take of this.due) {
        this.due.delete(take);
        take();
        if (this.now() >= until) break;
      }
    } finally {
      // a sample that threw (a fault of sbd's, never a gone cgroup: stall/feed.ts) leaves the
      // others queued for the next slice, as their own timers would have run them
      this.schedule();
    }
  }
}
