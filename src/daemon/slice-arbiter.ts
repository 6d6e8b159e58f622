/**
 * sbd one level up (design.md §11), wired: a SliceFeed for each configured slice that has
 * sessions, the machine watch, the slice controller, and the slices' rows for status. The
 * service tells it of sessions coming and going and of file events; it owns the rest.
 */
import * as path from 'node:path';
import type { Config } from '../config/schema';
import type { Session } from '../sessions/registry';
import type { SliceRow } from '../sessions/status';
import type { SliceLimits, SliceSample, SliceVerdict } from '../slice/detector';
import { SliceFeed } from '../slice/feed';
import { MachineWatch } from '../slice/machine-watch';
import { type MemberFigures, readSliceSample } from '../slice/read';
import { sliceRow } from '../slice/status';
import type { SessionFeed } from '../stall/feed';
import type { UserManager } from '../systemd/types';
import type { BrakeController } from './controller';
import type { Incidents } from './incidents';
import type { Logger } from './log';
import { SliceController } from './slice-controller';
import { StatusFigures } from './status-figures';
import { monotonicMs } from '../util/clock';

export interface SliceArbiterDeps {
  config: Config;
  manager: UserManager;
  incidents: Incidents;
  brakes: BrakeController;
  sessions(): Iterable<Session>;
  countInSlice(slice: string): number;
  feedOf(unit: string): SessionFeed | undefined;
  /** Watch / unwatch a file on sbd's shared inotify watch (throws when it cannot). */
  watchFile(file: string): void;
  unwatchFile(file: string): void;
  log: Logger;
  /** sbd is adopting the sessions it found at its start: they join no slice anew (no join note). */
  adopting?(): boolean;
  /** Every slice verdict, before the controller acts on it (sbd's metrics count the episodes). */
  observeVerdict?(verdict: SliceVerdict, sample: SliceSample): void;
}

/**
 * A session feed's sample stands for a slice member's figures when at most this share of a
 * window (detector.windowS) old: the member's two ends of a slice window are then never the same
 * sample, and its share is taken over a span of about a window (classifySliceWindow).
 */
export const MEMBER_FIGURES_FRESH_SHARE = 0.5;

/**
 * When only the members' sizes are wanted (nothing binds the slice: the culprit's baseline alone,
 * noted every SNAPSHOT_EVERY_MS), a feed's sample up to a whole window old stands for a member's
 * size: the note is as coarse as that anyway. An awake feed samples at least once a window, so in
 * a storm no member is read again (the slice's member reads were 6 % of sbd's CPU, bench:storm).
 */
export const MEMBER_SIZE_FRESH_SHARE = 1;

/**
 * A member's figures without a read by path (pure but for the feed's held files): its feed's last
 * sample when fresh enough for what is wanted, else a read through the files its feed holds open
 * (awake, or asleep within FILES_LINGER_MS); undefined when neither.
 */
export function memberFiguresOf(feed: Pick<SessionFeed, 'recentFigures' | 'heldFigures'> | undefined, nowMs: number, windowMs: number, sizesOnly: boolean): ReturnType<MemberFigures> {
  if (feed === undefined) return undefined;
  return feed.recentFigures(nowMs, (sizesOnly ? MEMBER_SIZE_FRESH_SHARE : MEMBER_FIGURES_FRESH_SHARE) * windowMs) ?? feed.heldFigures(nowMs, sizesOnly);
}

export class SliceArbiter {
  private readonly feeds = new Map<string, SliceFeed>();
  /** Each session's unit by its cgroup directory: a slice member's session feed (memberFigures). */
  private readonly unitByDir = new Map<string, string>();
  private readonly byFile = new Map<string, SliceFeed>();
  private readonly controller: SliceController;
  private readonly machine: MachineWatch;
  private readonly limits: SliceLimits;
  /** The slices' samples for status: a feed's last, or read for status (every member's files: 1,000 reads at 500 sessions). */
  private readonly readings = new StatusFigures<SliceSample>({ read: (dir) => readSliceSample(dir, monotonicMs()), now: monotonicMs, turn: () => new Promise((resolve) => setImmediate(resolve)) });

  constructor(private readonly deps: SliceArbiterDeps) {
    const { config, log } = deps;
    this.controller = new SliceController({
      config,
      manager: deps.manager,
      incidents: deps.incidents,
      brakes: deps.brakes,
      sessionAt: (dir) => {
        for (const session of deps.sessions()) if (session.cgroupDir === dir) return { session, feed: deps.feedOf(session.unit) };
        return undefined;
      },
      log: (level, msg, fields) => log[level](fields, msg),
    });
    this.limits = { reserveBytes: config.raise.reserve, criticalAvailableShare: config.arbitration.criticalAvailableShare, culpritMinGrowthBytes: config.arbitration.culpritMinGrowth };
    this.machine = new MachineWatch(
      this.limits,
      (r) => {
        log[r.level === 'ok' ? 'info' : 'warn']({ event: 'machine', level: r.level, memAvailableBytes: r.availableBytes, memTotalBytes: r.totalBytes }, `machine ${r.level}`);
        for (const f of this.feeds.values()) {
          if (r.level === 'critical' && f.sampling) f.sample(); // no waiting for the next window
          else if (r.level !== 'ok') f.wake(`machine ${r.level}`);
        }
      },
      (msg, fields) => log.warn(fields, msg),
    );
  }

  /** A session was added: its slice is watched from now on. */
  watch(s: Session): void {
    if (!this.deps.config.arbitration.enabled) return;
    this.unitByDir.set(s.cgroupDir, s.unit);
    const known = this.feeds.get(s.slice);
    if (known) {
      // a new session: where a slice's growth starts (SliceFeed.noteJoin)
      if (!this.deps.adopting?.()) known.noteJoin();
      return;
    }
    const { log } = this.deps;
    const feed = new SliceFeed(s.slice, path.dirname(s.cgroupDir), {
      config: this.deps.config.detector,
      limits: this.limits,
      onVerdict: (v, sample) => {
        this.readings.note(s.slice, sample, sample.atMs);
        this.deps.observeVerdict?.(v, sample);
        this.controller.onVerdict(feed, v, sample);
      },
      onGone: () => this.drop(s.slice),
      log: (msg, fields) => log.debug(fields, msg),
      now: monotonicMs,
      memberFigures: (dir, sizesOnly) => this.memberFigures(dir, sizesOnly),
      machineShort: () => this.machine.last !== undefined && this.machine.last.level !== 'ok',
    });
    this.feeds.set(s.slice, feed);
    feed.start();
    const events = path.join(feed.dir, 'memory.events.local');
    try {
      this.deps.watchFile(events);
      this.byFile.set(events, feed);
    } catch (err) {
      log.warn({ slice: s.slice, file: events, err }, "cannot watch the slice's brake counter: its PSI trigger and the machine watch still wake it");
    }
    this.machine.start();
  }

  /** A session was removed: its slice is let go once it has no session left. */
  unwatch(s: Session): void {
    if (this.unitByDir.get(s.cgroupDir) === s.unit) this.unitByDir.delete(s.cgroupDir);
    if (this.deps.countInSlice(s.slice) === 0) this.drop(s.slice);
  }

  /** A member's figures from its session feed (memberFiguresOf); else undefined, and the slice reads its files. */
  private memberFigures(dir: string, sizesOnly: boolean): ReturnType<MemberFigures> {
    const unit = this.unitByDir.get(dir);
    return unit === undefined ? undefined : memberFiguresOf(this.deps.feedOf(unit), monotonicMs(), this.deps.config.detector.windowS * 1000, sizesOnly);
  }

  private drop(slice: string): void {
    const feed = this.feeds.get(slice);
    if (!feed) return;
    const events = path.join(feed.dir, 'memory.events.local');
    if (this.byFile.delete(events)) this.deps.unwatchFile(events);
    feed.stop();
    this.feeds.delete(slice);
    this.readings.forget(slice);
    if (this.feeds.size === 0) this.machine.stop();
  }

  /** A file event: true when it was a slice's (its own brake or ceiling breached). */
  onFile(file: string, kind: 'modified' | 'gone'): boolean {
    const feed = this.byFile.get(file);
    if (!feed) return false;
    if (kind === 'modified') feed.wake("the slice's brake fired");
    return true;
  }

  /** The slices' rows from their last samples (read first where too old: daemon/status-figures.ts). */
  async rows(): Promise<SliceRow[]> {
    const feeds = [...this.feeds.values()];
    const readings = await this.readings.get(feeds.map((f) => ({ unit: f.slice, cgroupDir: f.dir })));
    const rows: SliceRow[] = [];
    const now = monotonicMs();
    for (const f of feeds) {
      const r = readings.get(f.slice);
      if (r === undefined || this.feeds.get(f.slice) !== f) continue; // the slice is gone meanwhile: no row
      const row = sliceRow(f.slice, r.figures, f.state, f.lastVerdict?.state, this.deps.config.arbitration.culpritMinGrowth, now, this.deps.incidents.lastAction(f.slice));
      rows.push({ ...row, feed: f.describe(), sampleAgeS: Math.max(0, (now - r.atMs) / 1000) });
    }
    return rows;
  }

  stop(): void {
    this.machine.stop();
    for (const f of this.feeds.values()) f.stop();
  }
}
