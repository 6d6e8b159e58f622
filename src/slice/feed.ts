/**
 * The event feed of one slice: a PSI trigger below the trip line on the slice's memory.pressure
 * (any member stalling wakes it), and wake-ups from the machine watch when MemAvailable runs
 * short. Awake, it takes one window every windowS until the slice is clear and the machine is
 * not short; then it sleeps. Asleep, it still reads the slice's memory.current every
 * SNAPSHOT_EVERY_MS and notes its members' sizes when the slice moved (the culprit's baseline,
 * should a stall come): one read a tick whatever the number of members.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { CgroupGoneError, readCurrentBytes } from '../cgroup/read';
import type { DetectorConfig } from '../config/schema';
import { type NativeError, PsiTrigger, type PsiTriggerSpec } from '../native';
import { BASELINE_SPAN_MS, JOIN_NOTE_MIN_MS, type MemberSample, SNAPSHOT_EVERY_MS, TICK_SLACK_MS, type SliceLimits, type SliceSample, type SliceState, type SliceVerdict, initialSliceState, membersPressureNeeded, noteMembers, noteWanted, redateNote, stepSlice } from './detector';
import { type MemberFigures, listMembers, readMembers, readSliceSample } from './read';

export interface SliceFeedHost {
  config: DetectorConfig;
  limits: SliceLimits;
  onVerdict(verdict: SliceVerdict, sample: SliceSample): void;
  onGone(): void;
  log(msg: string, fields: Record<string, unknown>): void;
  /** A monotonic clock in ms. */
  now(): number;
  /** The machine is short of memory: keep taking windows even when the slice looks clear. */
  machineShort(): boolean;
  armTrigger?: (file: string, spec: PsiTriggerSpec, onEvent: (kind: 'fired' | 'gone') => void) => Pick<PsiTrigger, 'close' | 'unref'>;
  /** Members' figures known already (their session feeds' fresh samples), not read again. */
  memberFigures?: MemberFigures;
  /** Reads a sample (tests pass their own). */
  read?: (dir: string, atMs: number) => SliceSample;
  readMembers?: (dir: string) => MemberSample[];
  /** Lists the members without reading them (tests pass their own). */
  listMembers?: (dir: string) => string[];
  /** Reads the slice's memory.current (tests pass their own). */
  readCurrent?: (dir: string) => number;
}

/**
 * Asleep, the members' sizes are noted when the slice's memory.current moved this share of the
 * culprit's minimum growth since the last note: the baseline then lies within a quarter of that
 * growth of the instant the room ran out, so the member that filled it still shows the growth.
 */
export const SNAPSHOT_STEP_SHARE = 0.25;
/** A steady slice's members are noted again after this (half the baseline's reach), so that a
 * stall after a long calm still finds a baseline within the span. */
export const STEADY_SNAPSHOT_MS = BASELINE_SPAN_MS / 2;

export class SliceFeed {
  state: SliceState = initialSliceState();
  lastVerdict: SliceVerdict | undefined;
  /** Why the slice has no PSI trigger, when it has none (then only the machine watch wakes it). */
  triggerProblem: string | undefined;
  private trigger: Pick<PsiTrigger, 'close' | 'unref'> | undefined;
  private timer: NodeJS.Timeout | undefined;
  private snapshots: NodeJS.Timeout | undefined;
  /** The slice's memory.current at the last note of its members. */
  private notedTotal: number | undefined;
  private stopped = false;

  constructor(
    readonly slice: string,
    readonly dir: string,
    private readonly host: SliceFeedHost,
  ) {}

  /** How it is woken, for status: "psi" (its trigger), or without one what wakes it instead. */
  describe(): string {
    if (this.triggerProblem === undefined) return 'psi';
    const why = fs.existsSync(path.join(this.dir, 'memory.pressure')) ? 'no PSI trigger' : 'no PSI';
    return `${why}: woken by its brake counter and the machine watch, judged by the fallback measure`;
  }

  get sampling(): boolean {
    return this.timer !== undefined;
  }

  start(): void {
    const cfg = this.host.config;
    // Its own pace, not the machine watch's: that one reads an idle machine every 15 s, and a
    // member that filled the slice from nothing within those 15 s left no note of the others
    // settled before it (CI, guest 36 on Debian 13: the innocent judged the culprit)
    this.snapshots = setInterval(() => this.observe(), SNAPSHOT_EVERY_MS);
    this.snapshots.unref();
    this.observe();
    const windowUs = cfg.windowS * 1_000_000;
    try {
      const arm = this.host.armTrigger ?? ((f, spec, cb) => PsiTrigger.arm(f, spec, cb));
      this.trigger = arm(path.join(this.dir, 'memory.pressure'), { kind: 'full', stallUs: Math.max(1, Math.round(cfg.clearShare * windowUs)), windowUs }, (kind) => {
        if (kind === 'fired') this.wake('psi-trigger');
        else this.gone();
      });
      this.trigger.unref();
    } catch (err) {
      this.triggerProblem = `${(err as NativeError).code ?? ''} ${(err as Error).message}`.trim();
      this.host.log('no PSI trigger on the slice: only the machine watch wakes it', { dir: this.dir, reason: this.triggerProblem });
    }
  }

  wake(why: string): void {
    if (this.sampling) return;
    this.host.log('slice waking', { dir: this.dir, why });
    this.sample();
    if (this.stopped || this.state.last === undefined) return; // gone, or asleep again at once
    this.timer = setInterval(() => this.sample(), this.host.config.windowS * 1000);
    this.timer.unref();
  }

  sample(): SliceVerdict | undefined {
    let sample: SliceSample;
    try {
      const last = this.state.last;
      sample = this.host.read
        ? this.host.read(this.dir, this.host.now())
        : readSliceSample(this.dir, this.host.now(), (own) => membersPressureNeeded(last, own, this.host.config, this.host.limits), this.host.memberFigures);
    } catch (err) {
      if (err instanceof CgroupGoneError) {
        this.gone();
        return undefined;
      }
      throw err;
    }
    const [next, verdict] = stepSlice(this.state, sample, this.host.config, this.host.limits);
    // a window's sample noted the members: the steady note's "moved" counts from its total
    if (next.history[next.history.length - 1] !== this.state.history[this.state.history.length - 1]) this.notedTotal = sample.currentBytes;
    this.state = next;
    this.lastVerdict = verdict;
    this.host.onVerdict(verdict, sample);
    if (verdict.window !== undefined && verdict.state === 'clear' && this.state.episode === undefined && !this.host.machineShort()) this.sleep();
    return verdict;
  }

  /**
   * Note the members' sizes when due (its own tick, asleep): the culprit's baseline, should a
   * stall come. Due when the slice moved SNAPSHOT_STEP_SHARE of the minimum growth since the last
   * note, or that note is STEADY_SNAPSHOT_MS old; awake, the windows' samples note them. A steady
   * slice whose members are the same re-dates its last note instead (redateNote).
   */
  observe(): void {
    if (this.stopped || this.state.episode || this.sampling) return;
    try {
      const total = (this.host.readCurrent ?? readCurrentBytes)(this.dir);
      const newest = this.state.history[this.state.history.length - 1];
      const now = this.host.now();
      const moved = this.notedTotal === undefined || Math.abs(total - this.notedTotal) >= SNAPSHOT_STEP_SHARE * this.host.limits.culpritMinGrowthBytes;
      if (!noteWanted(this.state, now) || (newest && !moved && now - newest.atMs < STEADY_SNAPSHOT_MS - TICK_SLACK_MS)) return;
      // steady, and the same members: the last note's sizes stand (a listing, not a read of each)
      const redated = moved ? undefined : redateNote(this.state, now, (this.host.listMembers ?? listMembers)(this.dir));
      if (redated) {
        this.state = redated;
        return;
      }
      this.noteNow(now, total);
    } catch {
      /* unreadable now (gone: its trigger says so): the next tick tries again */
    }
  }

  /** Read the members' sizes and note them at `now` (unless noteMembers declines); `total` is the slice's memory.current read for it. */
  private noteNow(now: number, total: number, minGapMs?: number): void {
    const state = noteMembers(this.state, now, (this.host.readMembers ?? ((dir) => readMembers(dir, true)))(this.dir), minGapMs);
    if (state !== this.state) this.notedTotal = total;
    this.state = state;
  }

  /**
   * A member joined the slice (a new session, not one adopted at sbd's start): its members are
   * noted now (JOIN_NOTE_MIN_MS), so the baseline holds the others' sizes from before it grew.
   * Nothing during an episode or a hot run (noteMembers).
   */
  noteJoin(): void {
    const now = this.host.now();
    if (this.stopped || !noteWanted(this.state, now, JOIN_NOTE_MIN_MS)) return; // no read at all: a burst of joins reads twice a second
    try {
      this.noteNow(now, (this.host.readCurrent ?? readCurrentBytes)(this.dir), JOIN_NOTE_MIN_MS);
    } catch {
      /* unreadable now (gone: its trigger says so): the next tick notes */
    }
  }

  setState(state: SliceState): void {
    this.state = state;
  }

  private sleep(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    this.state = { ...this.state, last: undefined };
  }

  private gone(): void {
    this.stop();
    this.host.onGone();
  }

  stop(): void {
    this.stopped = true;
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    if (this.snapshots) clearInterval(this.snapshots);
    this.snapshots = undefined;
    this.trigger?.close();
    this.trigger = undefined;
  }
}
