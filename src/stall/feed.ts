/**
 * The event feed of one session (design.md §4): a PSI trigger below the trip line on its
 * memory.pressure, and a hint from its own-brake counter (memory.events.local, watched by the
 * shared FileWatch). When woken it samples once per window, only while the session is not
 * clear; clear again, it sleeps and costs nothing. Without triggers (no PSI, no permission) it
 * samples on a timer instead, and says so.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { parseSingle } from '../cgroup/parse';
import { CgroupGoneError, fullStallUsOf, type MemorySample, readMemorySample, SampleFiles, type SampleFileName } from '../cgroup/read';
import type { DetectorConfig } from '../config/schema';
import { type NativeError, PsiTrigger, type PsiTriggerSpec, PsiWindowError } from '../native';
import { monotonicMs } from '../util/clock';
import { type Cadence, type DetectorSample, type DetectorState, type Measure, type Verdict, cadenceOf, hintPaceMs, initialState, pressedInWindow, resumeFrom, step, windowMsOf } from './detector';

/** How this session is fed: woken by a PSI trigger, or sampled on a timer. */
export type FeedMode = 'psi' | 'timer';

export interface FeedHost {
  config: DetectorConfig;
  /** Units (cgroups) under the session's slice, sessions or not, itself included. */
  unitsInSlice(): number;
  /** Every verdict, with the sample it came from. */
  onVerdict(verdict: Verdict, sample: DetectorSample): void;
  /** Every sample as read, before it is judged (the OOM watch takes its oom_kill from it). */
  onSample?(raw: MemorySample): void;
  /** The session's cgroup vanished: its PSI trigger's POLLERR, or gone while sampling. */
  onGone(): void;
  log(msg: string, fields: Record<string, unknown>): void;
  /** The clock of the windows, in ms: CLOCK_MONOTONIC (util/clock.ts) unless a test passes its own. Never the wall clock. */
  now?(): number;
  /** Arms the PSI trigger (PsiTrigger.arm; tests pass their own). */
  armTrigger?: (file: string, spec: PsiTriggerSpec, onEvent: (kind: 'fired' | 'gone') => void) => Pick<PsiTrigger, 'close' | 'unref'>;
  /** Opens the sample's files for an awake feed (SampleFiles.open; tests pass their own). */
  openFiles?: (dir: string) => SampleReader;
  /** The service's count of awake PSI feeds, shared by all its feeds (none: this one alone). */
  awake?: AwakeFeeds;
}

/** A sample's files held open while the feed is awake. */
export type SampleReader = Pick<SampleFiles, 'read' | 'close'> & Partial<Pick<SampleFiles, 'textOf'>>;

/**
 * How long a sleeping feed keeps its sample's files open before closing them. In a storm a feed
 * sleeps after a clear window and is woken again within seconds (its brake still pressed), and
 * each wake opened the seven files anew: 5 % of sbd's CPU in issue 15's storm of 200 (bench:storm
 * profile). Ten seconds spans those sleeps (a hint wakes at most every hintPaceS, a trigger every
 * windowS); an idle session still holds its trigger's fd alone (sbctl doctor) ten seconds after
 * its last window.
 */
export const FILES_LINGER_MS = 10_000;

/**
 * Windows in a row that came later than due by more than an onset window before a feed takes
 * steady ones (cadenceUnderLoad): one late window is a hiccup of the machine (on a quiet host a
 * wedge lost 2 s to a single window 0.7 s late in the TCG guest, bench:detect); two in a row
 * are sbd not keeping up with its feeds.
 */
export const LATE_WINDOWS_UNDER_LOAD = 2;

/**
 * The cadence of a feed's next window when sbd runs late (pure). An onset window (0.5 s) exists to
 * judge a stall sooner; when this feed's last LATE_WINDOWS_UNDER_LOAD windows each came later than
 * due by more than an onset window, sbd is not keeping up with its feeds (a storm: 200 sessions
 * awake at once were 400 samples a second, issue 15 item 5), and more short windows would only
 * make every feed later. Its next windows are steady ones (windowS, two hot to stand still) until
 * a window comes on time, unless its last window was hot (`hotRunGoesOn`): a run of hot windows
 * on the way to a verdict keeps onset windows, however late. Turned steady, such a run waits a
 * whole 2 s window more for the hot window that ends it (rare: one window of 6,930 in session 18's
 * traced storm before this rule); the samples sbd saves under load are those of sessions not stalling.
 * Kept on onset windows, a run still needs onsetHotWindows hot ones, each at least an onset window
 * long (or two late ones holding a stall that on-time windows always catch: stall/detector.ts
 * lateRunStandsStill), so the shortest burst it can call a stall stays 0.7 s; a verdict comes on a hot window only
 * (stall/detector.ts step), whichever cadence the count of the run was made at.
 */
export function cadenceUnderLoad(cadence: Cadence, lateInARow: number, hotRunGoesOn = false): Cadence {
  return cadence === 'onset' && lateInARow >= LATE_WINDOWS_UNDER_LOAD && !hotRunGoesOn ? 'steady' : cadence;
}

/** Whether the state is in a run of hot windows that its last window continued (pure). */
export function inHotRun(state: Pick<DetectorState, 'hotWindows' | 'lastWindow'>): boolean {
  return state.hotWindows > 0 && state.lastWindow?.kind === 'hot';
}

/**
 * While sbd runs late (LATE_WINDOWS_UNDER_LOAD), a feed whose deadline runs takes windows this many
 * times windowS long. Its session stands still already: its windows only watch for progress or a
 * clear window before the deadline ends, and a longer window judges that as well (a share over
 * 8 s, not 2 s). In a storm they were the windows of sessions judged already, taking sbd from
 * those not judged yet (bench:storm); the cost is a deadline's end or a recovery seen up to 8 s
 * later while sbd is behind, against a deadline of minutes.
 */
export const DEADLINE_WINDOWS_STRETCH_UNDER_LOAD = 4;

/**
 * From this many PSI feeds awake at once (AwakeFeeds), sbd is in a storm and a running deadline's
 * windows are stretched (DEADLINE_WINDOWS_STRETCH_UNDER_LOAD) before sbd runs late. In session
 * 18's traced storm of 200 (bench:storm), the sessions judged already took more of sbd's samples
 * than those not yet judged from 8 s after the release on (90 a second against 12 in the tail,
 * where the slowest verdicts came), while sbd stayed less than an onset window late, so the late
 * rule never stretched them. Sixteen is four times the most feeds any guest test wakes at once
 * (a greedy build beside innocent neighbours), and a quarter of the 60 awake in the storm's first
 * seconds.
 */
export const AWAKE_FEEDS_OF_A_STORM = 16;

/**
 * How long a feed's next window is, in ms (pure): its cadence's (windowMsOf), stretched
 * DEADLINE_WINDOWS_STRETCH_UNDER_LOAD times while a deadline runs on the PSI feed and either its
 * last LATE_WINDOWS_UNDER_LOAD windows came late or AWAKE_FEEDS_OF_A_STORM feeds are awake.
 */
export function windowPeriodMs(cadence: Cadence, mode: FeedMode, cfg: DetectorConfig, deadlineRuns: boolean, lateInARow: number, awakeFeeds = 0): number {
  const ms = windowMsOf(cadence, mode, cfg);
  const underLoad = lateInARow >= LATE_WINDOWS_UNDER_LOAD || awakeFeeds >= AWAKE_FEEDS_OF_A_STORM;
  return mode === 'psi' && deadlineRuns && underLoad ? ms * DEADLINE_WINDOWS_STRETCH_UNDER_LOAD : ms;
}

/**
 * The PSI feeds of a service taking windows now, counted by the feeds themselves: in when their
 * windows start, out when they sleep or stop (windowPeriodMs's storm).
 */
export class AwakeFeeds {
  private awake = 0;

  get count(): number {
    return this.awake;
  }

  enter(): void {
    this.awake++;
  }

  leave(): void {
    this.awake = Math.max(0, this.awake - 1);
  }
}

export class SessionFeed {
  mode: FeedMode = 'psi';
  /** Why the session is sampled on a timer, when it is. */
  fallbackReason: string | undefined;
  state: DetectorState = initialState();
  lastVerdict: Verdict | undefined;
  private trigger: Pick<PsiTrigger, 'close' | 'unref'> | undefined;
  private timer: NodeJS.Timeout | undefined;
  /** The period the timer runs at, in ms, and the cadence of its windows. */
  private timerMs = 0;
  private timerCadence: Cadence | undefined;
  /** When the last sample was taken (monotonic ms), and how many windows in a row came late. */
  private lastSampleAtMs: number | undefined;
  private lateInARow = 0;
  /** When the PSI trigger last fired, awake or not (monotonic ms). */
  private firedAtMs = -Infinity;
  /** When a hint last woke the feed (monotonic ms). */
  private lastHintMs = -Infinity;
  /** Set by stop(): no timer may start again. */
  private stopped = false;
  /** Counted in the host's AwakeFeeds: its PSI windows run. */
  private countedAwake = false;
  private readonly measure: Measure;
  /** The sample's files, open while awake on the PSI feed; closed asleep, so that an idle session
   * holds its trigger's fd alone (sbctl doctor's FILES_PER_SESSION). */
  private files: SampleReader | undefined;
  /** Closes the files FILES_LINGER_MS after the feed went to sleep (none while awake). */
  private lingerTimer: NodeJS.Timeout | undefined;
  /** Opening them failed once (EMFILE): told once, then samples read by path. */
  private openFailedTold = false;
  /** The last sample as read (recentFigures). */
  private lastRaw: MemorySample | undefined;
  /** The last sample before the feed went to sleep (resumeFrom). */
  private sleptFrom: DetectorSample | undefined;

  constructor(
    private readonly cgroupDir: string,
    private readonly host: FeedHost,
  ) {
    this.measure = fs.existsSync(path.join(cgroupDir, 'memory.pressure')) ? 'psi' : 'fallback';
  }

  /** How it is fed, for status: "psi", "sampling (no PSI)" (the kernel has none), or
   * "sampling (no PSI trigger)" (PSI, but no trigger could be armed: fallbackReason says why). */
  describe(): string {
    if (this.mode === 'psi') return 'psi';
    return this.measure === 'fallback' ? 'sampling (no PSI)' : 'sampling (no PSI trigger)';
  }

  /** True while windows are being taken. */
  get sampling(): boolean {
    return this.timer !== undefined;
  }

  /** The length of the windows being taken, in ms: 0 while asleep. */
  get windowMs(): number {
    return this.timer === undefined ? 0 : this.timerMs;
  }

  start(): void {
    const cfg = this.host.config;
    const windowUs = cfg.windowS * 1_000_000;
    if (this.measure === 'psi') {
      try {
        // Fires at the clear line (full 0.1 of the window), below the trip line: no hot window
        // passes unseen (psi.rst: at most one event per window).
        const stallUs = Math.max(1, Math.round(cfg.clearShare * windowUs));
        const arm = this.host.armTrigger ?? ((f, spec, cb) => PsiTrigger.arm(f, spec, cb));
        this.trigger = arm(path.join(this.cgroupDir, 'memory.pressure'), { kind: 'full', stallUs, windowUs }, (kind) => {
          if (kind === 'fired') {
            this.firedAtMs = (this.host.now ?? monotonicMs)();
            // awake too: when the kernel fires against when the windows see it (bench:detect's timelines)
            if (this.sampling) this.host.log('psi trigger fired', { dir: this.cgroupDir });
            this.wake('psi-trigger');
          }
          else this.gone(); // POLLERR: the kernel removed the cgroup
        });
        this.trigger.unref();
        return;
      } catch (err) {
        this.fallbackReason = err instanceof PsiWindowError ? err.message : `${(err as NativeError).code ?? ''} ${(err as Error).message}`.trim();
      }
    } else {
      this.fallbackReason = 'no memory.pressure here (kernel without PSI)';
    }
    this.mode = 'timer';
    this.host.log('PSI trigger impossible: sampling on a timer', { dir: this.cgroupDir, reason: this.fallbackReason });
    this.schedule();
  }

  /** The next window's cadence: short onset windows from a PSI wake to a verdict, else steady;
   * steady also while sbd runs late, unless a run of hot windows goes on (cadenceUnderLoad). */
  private nextCadence(): Cadence {
    return cadenceUnderLoad(cadenceOf(this.state, this.mode), this.lateInARow, inHotRun(this.state));
  }

  /** (Re)start the timer at the current cadence's period, unless it already runs at it. */
  private schedule(): void {
    const cadence = this.nextCadence();
    if (this.stopped) return;
    this.countAwake(this.mode === 'psi');
    const ms = windowPeriodMs(cadence, this.mode, this.host.config, this.state.deadline !== undefined, this.lateInARow, this.host.awake?.count);
    this.timerCadence = cadence;
    if (this.timer !== undefined && this.timerMs === ms) return;
    if (this.timer) clearInterval(this.timer);
    this.timerMs = ms;
    this.timer = setInterval(() => this.sample(), ms);
    this.timer.unref();
  }

  /**
   * Its own brake fired (memory.events.local moved): a hint to take windows before the trigger
   * fires. At most one wake per hintPaceMs: a brake grinding page cache moves the counter all the
   * time, and each wake costs two samples.
   */
  hint(why: string): void {
    const now = (this.host.now ?? monotonicMs)();
    if (this.sampling || now - this.lastHintMs < hintPaceMs(this.host.config)) return;
    this.lastHintMs = now;
    this.wake(why);
  }

  /** A sign that the session may be under pressure (the trigger fired, a deadline restored): start windows. */
  wake(why: string): void {
    if (this.sampling) return;
    this.host.log('waking', { dir: this.cgroupDir, why });
    if (this.mode === 'psi' && !this.openFiles()) return;
    // After a short sleep the wake's sample ends a window begun at the last one (resumeFrom).
    const from = this.sleptFrom;
    this.sleptFrom = undefined;
    if (from !== undefined && this.state.last === undefined && resumeFrom(from.atMs, (this.host.now ?? monotonicMs)(), this.host.config)) this.state = { ...this.state, last: from };
    this.sample();
    // Not when that sample found the cgroup gone (stopped) or the session clear (asleep again).
    if (this.state.last !== undefined) this.schedule();
  }

  /** Hold the sample's files open for the windows to come; false when the cgroup is gone (the
   * feed is over). Any other failure (out of open files) leaves the samples read by path. */
  private openFiles(): boolean {
    this.cancelLinger();
    if (this.files) return true;
    try {
      this.files = (this.host.openFiles ?? SampleFiles.open)(this.cgroupDir);
    } catch (err) {
      if (err instanceof CgroupGoneError) {
        this.gone();
        return false;
      }
      if (!this.openFailedTold) this.host.log('cannot hold the sample files open: reading them by path', { dir: this.cgroupDir, err: (err as Error).message });
      this.openFailedTold = true;
    }
    return true;
  }

  private closeFiles(): void {
    this.cancelLinger();
    this.files?.close();
    this.files = undefined;
  }

  /** Asleep: the files stay open a while, for a wake that comes soon (FILES_LINGER_MS). */
  private lingerFiles(): void {
    if (!this.files || this.lingerTimer) return;
    this.lingerTimer = setTimeout(() => {
      this.lingerTimer = undefined;
      this.closeFiles();
    }, FILES_LINGER_MS);
    this.lingerTimer.unref();
  }

  private cancelLinger(): void {
    if (this.lingerTimer) clearTimeout(this.lingerTimer);
    this.lingerTimer = undefined;
  }

  /** One of the sample's files read through the fd the feed holds, when it holds them (awake,
   * or asleep within FILES_LINGER_MS): a positioned read instead of an open, read and close by
   * path. Undefined when not held; CgroupGoneError when the cgroup was removed. */
  heldText(name: SampleFileName): string | undefined {
    return this.files?.textOf?.(name);
  }

  /** Sample files held open now (awake, or asleep within FILES_LINGER_MS). */
  get holdsFiles(): boolean {
    return this.files !== undefined;
  }

  /** Take one sample now and step the detector. */
  sample(): Verdict | undefined {
    let raw: MemorySample;
    try {
      const atMs = (this.host.now ?? monotonicMs)();
      // How late this window came: only between the timer's samples (a wake's first is not due).
      const lateMs = this.timer !== undefined && this.lastSampleAtMs !== undefined ? Math.max(0, atMs - this.lastSampleAtMs - this.timerMs) : 0;
      this.lateInARow = lateMs > this.host.config.onsetWindowS * 1000 ? this.lateInARow + 1 : 0;
      this.lastSampleAtMs = atMs;
      raw = this.files ? this.files.read(atMs) : readMemorySample(this.cgroupDir, atMs);
      this.lastRaw = raw;
    } catch (err) {
      if (err instanceof CgroupGoneError) {
        this.gone();
        return undefined;
      }
      throw err;
    }
    this.host.onSample?.(raw);
    const windowFrom = this.state.last?.atMs;
    // The window that ends now was taken at the cadence its timer ran at (of the state it began in).
    const cadence = this.timer !== undefined && this.timerCadence !== undefined ? this.timerCadence : cadenceOf(this.state, this.mode);
    const sample: DetectorSample = { ...raw, unitsInSlice: this.host.unitsInSlice(), measure: this.measure, cadence };
    const [next, verdict] = step(this.state, sample, this.host.config);
    this.state = next;
    this.lastVerdict = verdict;
    this.host.onVerdict(verdict, sample);
    // Clear and no deadline: back to sleep until the trigger fires again. The next wake starts
    // from a fresh sample, so a long sleep is never averaged into one window.
    // Not while the trigger fired during the window: the kernel fires once per 2 s window, so a
    // stall that began late in a clear onset window would wait up to 2 s for the next event.
    // Nor within the trigger's window after it last fired (the one that woke it too): it cannot
    // fire again before that, and a stall that began meanwhile waited for it (the quiet-host
    // bench:detect saw 1.4 s of a stall go by asleep after a wake's clear window).
    const firedInWindow = windowFrom !== undefined && this.firedAtMs > windowFrom;
    const triggerMuted = sample.atMs - this.firedAtMs < this.host.config.windowS * 1000;
    // Nor while its own brake was pressed by anonymous memory during the window (pressedInWindow).
    const pressed = pressedInWindow(verdict.window, this.host.config);
    if (this.mode === 'psi' && verdict.window !== undefined && verdict.state === 'clear' && this.state.deadline === undefined && !firedInWindow && !triggerMuted && !pressed) this.sleep();
    else if (this.sampling) this.schedule(); // a deadline began or ended: the cadence changed
    return verdict;
  }

  /**
   * The last sample's size and full-stall total, when it was taken at most `maxAgeMs` before
   * `nowMs` on the PSI measure: the slice's feed takes them instead of reading the same two files
   * again (slice/read.ts MemberFigures).
   */
  recentFigures(nowMs: number, maxAgeMs: number): { atMs: number; currentBytes: number; fullUs: number } | undefined {
    const r = this.lastRaw;
    if (r === undefined || this.measure !== 'psi' || nowMs < r.atMs || nowMs - r.atMs > maxAgeMs) return undefined;
    return { atMs: r.atMs, currentBytes: r.currentBytes, fullUs: r.pressureFullUs };
  }

  /**
   * The session's size (and full-stall total unless `sizesOnly`) read now through the files the
   * feed holds open, for the slice's feed: a positioned read instead of an open, read and close by
   * path. Undefined when it holds none, or the read failed (the slice then reads by path, and
   * finds a gone cgroup gone).
   */
  heldFigures(nowMs: number, sizesOnly: boolean): { atMs: number; currentBytes: number; fullUs: number } | undefined {
    if (this.files?.textOf === undefined) return undefined;
    try {
      const current = this.files.textOf('memory.current');
      if (current === undefined) return undefined;
      const pressure = sizesOnly ? undefined : this.files.textOf('memory.pressure');
      return { atMs: nowMs, currentBytes: parseSingle(current, `${this.cgroupDir}/memory.current`), fullUs: fullStallUsOf(pressure, this.cgroupDir) };
    } catch {
      return undefined;
    }
  }

  /** Replace the detector state (restored after a restart, reset after an action). */
  setState(state: DetectorState): void {
    this.state = state;
    this.sleptFrom = undefined; // a window never spans a restored or reset state
    if (state.deadline !== undefined && this.mode === 'psi') this.wake('restored deadline');
    if (this.sampling) this.schedule();
  }

  /** In or out of the host's AwakeFeeds, once each way. */
  private countAwake(awake: boolean): void {
    if (awake === this.countedAwake) return;
    this.countedAwake = awake;
    if (awake) this.host.awake?.enter();
    else this.host.awake?.leave();
  }

  private sleep(): void {
    this.countAwake(false);
    this.lingerFiles();
    this.lastSampleAtMs = undefined;
    this.lateInARow = 0;
    this.timerCadence = undefined;
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    this.timerMs = 0;
    this.sleptFrom = this.state.last;
    this.state = { ...this.state, last: undefined };
  }

  private gone(): void {
    this.stop();
    this.host.onGone();
  }

  stop(): void {
    this.stopped = true;
    this.countAwake(false);
    this.closeFiles();
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    this.trigger?.close();
    this.trigger = undefined;
  }
}
