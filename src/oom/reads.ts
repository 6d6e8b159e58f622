/**
 * When a session's oom_kill counter is read (issue 15): memory.events.local changes with every
 * breach of the brake, many times a second for each session of a storm. A session whose feed is
 * awake reads that file at its next window anyway and hands the counter on (`sampled`): no read
 * of its own, only a mark that one is owed. Otherwise a read, throttled per session
 * (OOM_CHECK_EVERY_MS, with a trailing read after a burst). A session that ends with a read owed
 * or waiting still has it, so a kill that ended it is told.
 */
import { KeyedThrottle } from '../util/keyed-throttle';
import { OOM_CHECK_EVERY_MS, type OomSession } from './watch';

/** What the schedule drives (OomKillWatch). */
export interface OomCounter {
  check(s: OomSession): void;
  sampled(s: OomSession, count: number): void;
  forget(unit: string): void;
}

export class OomReads {
  private readonly throttle: KeyedThrottle;
  /** Sessions whose file changed while their feed was awake: its next sample reads it. */
  private readonly owed = new Set<string>();

  constructor(
    private readonly counter: OomCounter,
    everyMs = OOM_CHECK_EVERY_MS,
    now?: () => number,
  ) {
    this.throttle = new KeyedThrottle(everyMs, now);
  }

  /** memory.events.local changed; `feedAwake`: the session's PSI feed is taking windows. */
  changed(s: OomSession, feedAwake: boolean): void {
    if (feedAwake) this.owed.add(s.unit);
    else this.throttle.run(s.unit, () => this.counter.check(s));
  }

  /** The feed read the file; `count` its oom_kill, undefined when the sample had none. */
  sampled(s: OomSession, count: number | undefined): void {
    this.owed.delete(s.unit);
    if (count !== undefined) this.counter.sampled(s, count);
  }

  /** The session ended: a waiting or owed read now, then nothing kept. */
  removed(s: OomSession): void {
    this.throttle.flush(s.unit);
    if (this.owed.delete(s.unit)) this.counter.check(s);
    this.counter.forget(s.unit);
  }

  /** How many sessions owe a read to their next sample. */
  get owedCount(): number {
    return this.owed.size;
  }
}
