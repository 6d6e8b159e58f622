/**
 * What sbd does with verdicts, per session: raise the brake of a session standing still when
 * there is room; otherwise let the deadline run and then stop its biggest command; lower a
 * raised brake back in steps once the session has been clear for a while. In observe-only mode
 * every would-be action is told and logged, and nothing is changed.
 */
import * as path from 'node:path';
import type { Config } from '../config/schema';
import { liftForStop, planLower, planRaise } from '../actions/brake-policy';
import { currentOf, memAvailable, othersInSlice, sliceHigh } from '../actions/machine';
import { dueAtMs } from '../actions/kill-due';
import { type StopReport, finishStop, stopSubtree } from '../actions/stop-subtree';
import { holdProcesses } from '../actions/terminate';
import { systemPageSize } from '../proc/system';
import { readCgroupProcesses, rootProcess } from '../proc/table';
import type { Session } from '../sessions/registry';
import { type DetectorSample, type Verdict, muteAfterLowering, resetEpisode } from '../stall/detector';
import type { SessionFeed } from '../stall/feed';
import type { UserManager } from '../systemd/types';
import { formatSize } from '../util/size';
import { chooseVictim } from '../victim/choose';
import type { Incident, Incidents } from './incidents';
import { restoreDeadline } from './saved-deadline';
import type { SavedSession, SavedStop } from './state-file';
import { type SbdClock, systemClock } from '../util/clock';

/** Per-session memory of the controller, beyond the detector's own state. */
export interface BrakeState {
  /** MemoryHigh before our first raise. */
  originalHigh: number | undefined;
  /** A stop is under way (persisted: after a crash mid-stop it is not started again). */
  stopping: boolean;
  /** Its record once the processes are held (persisted: a restarted sbd finishes the stop). */
  pendingStop: SavedStop | undefined;
  /**
   * The deadline expired and that was told, but nothing was stopped (nothing may be, or
   * observe-only): not told again until the session clears; the choice is re-checked each window.
   */
  expiryTold: boolean;
  lowerTimer: NodeJS.Timeout | undefined;
}

export interface ControllerDeps {
  config: Config;
  manager: UserManager;
  incidents: Incidents;
  /** All sessions (for the slice's room). */
  sessions(): Session[];
  /** Is this session still watched (not forgotten)? One lookup; by default a search of sessions(). */
  known?(session: Session): boolean;
  /** Persist this session's state (deadline, original brake, stop under way). */
  save(unit: string, s: SavedSession | undefined): void;
  log(level: 'info' | 'warn' | 'debug', msg: string, fields: Record<string, unknown>): void;
  /** The clock of deadlines and mutes (the feeds' own), and the boot it belongs to; tests pass their own. */
  clock?: SbdClock;
}

export class BrakeController {
  private readonly brakes = new Map<string, BrakeState>();
  private readonly clock: SbdClock;

  constructor(private readonly deps: ControllerDeps) {
    this.clock = deps.clock ?? systemClock;
  }

  brake(unit: string): BrakeState {
    let b = this.brakes.get(unit);
    if (!b) {
      b = { originalHigh: undefined, stopping: false, pendingStop: undefined, expiryTold: false, lowerTimer: undefined };
      this.brakes.set(unit, b);
    }
    return b;
  }

  forget(unit: string): void {
    const b = this.brakes.get(unit);
    if (b?.lowerTimer) clearTimeout(b.lowerTimer);
    this.brakes.delete(unit);
  }

  /** Run an action in the background; a failure is logged, never fatal to sbd. */
  private background(session: Session, what: string, action: Promise<void>): void {
    action.catch((err: unknown) => this.deps.log('warn', `${what} failed`, { unit: session.unit, err }));
  }

  private tell(session: Session, type: Incident['type'], message: string, figures: Record<string, unknown> = {}): void {
    this.deps.incidents.tell({ type, unit: session.unit, session: session.id, atMs: Date.now(), message, observeOnly: this.deps.config.observeOnly, ...figures });
  }

  private persist(session: Session, feed: SessionFeed | undefined): void {
    // An action that ends after the session was forgotten (removed meanwhile) saves nothing.
    if (!(this.deps.known ? this.deps.known(session) : this.deps.sessions().includes(session))) return;
    const b = this.brake(session.unit);
    const deadline = feed?.state.deadline;
    if (deadline === undefined && b.originalHigh === undefined && !b.stopping) return this.deps.save(session.unit, undefined);
    const bootId = this.clock.bootId();
    this.deps.save(session.unit, {
      invocationId: session.invocationId,
      ...(bootId !== undefined ? { bootId } : {}),
      ...(deadline ? { deadline } : {}),
      ...(b.originalHigh !== undefined ? { originalHigh: b.originalHigh } : {}),
      ...(b.stopping ? { stopping: true } : {}),
      ...(b.pendingStop ? { stop: b.pendingStop } : {}),
    });
  }

  private async setHigh(session: Session, bytes: number): Promise<void> {
    await this.deps.manager.setMemory(session.unit, { memoryHigh: bytes });
    session.memoryHigh = bytes;
  }

  /** React to one verdict of the session's feed. */
  onVerdict(session: Session, feed: SessionFeed, v: Verdict, sample: DetectorSample): void {
    // Every verdict at debug: those that matter are told as incidents (their own journal entry
    // with the explanation); a second info line each was 4 % of sbd's CPU in bench:storm. The
    // explanation is a getter: written only when the line is (the verdict's own is lazy).
    this.deps.log('debug', 'verdict', { event: 'verdict', unit: session.unit, verdict: v.event, state: v.state, get explain() { return v.explain; } });
    const b = this.brake(session.unit);
    if (v.window?.kind === 'clear' && b.originalHigh !== undefined && feed.state.deadline === undefined) this.scheduleLower(session, feed);
    if (v.window?.kind === 'hot' && b.lowerTimer) {
      clearTimeout(b.lowerTimer);
      b.lowerTimer = undefined;
    }
    switch (v.event) {
      case 'standing-still':
        this.tell(session, 'standing-still', `standing still against its own brake (${v.explain})`, { share: v.window?.share, anonShare: v.window?.anonShare, evidence: v.window?.evidence, deadlineS: Math.round(v.deadlineRemainingMs ?? 0) / 1000 }); // to the ms: the monotonic clock's fractional ms gave 19.999999999999986 for 20
        this.background(session, 'raising the brake', this.tryRaise(session, feed, sample));
        break;
      case 'deadline-expired':
        if (!b.stopping) this.background(session, 'stopping the biggest command', this.stopBiggest(session, feed, { evidence: v.window?.evidence, share: v.window?.share, anonShare: v.window?.anonShare }));
        break;
      case 'near-memory-max':
        // the grace cut short: the figures say how near the wall was
        if (!b.stopping) {
          const nearMax = { currentBytes: sample.currentBytes, highBytes: sample.highBytes, maxBytes: sample.maxBytes, leftBytes: sample.maxBytes - sample.currentBytes };
          const because = `${formatSize(nearMax.leftBytes)} left below its MemoryMax ${formatSize(sample.maxBytes)}, ${formatSize(sample.currentBytes - sample.highBytes)} over its brake: the grace is cut short before the kernel's OOM killer takes the whole scope`;
          this.background(session, 'stopping the biggest command', this.stopBiggest(session, feed, { evidence: v.window?.evidence, share: v.window?.share, anonShare: v.window?.anonShare, nearMemoryMax: nearMax, because }));
        }
        break;
      case 'cleared':
      case 'progress':
        b.expiryTold = false;
        this.tell(session, 'cleared', v.event === 'progress' ? 'moving again: memory dropped since the deadline started' : `clear again (${v.explain})`);
        break;
      default:
        break;
    }
    this.persist(session, feed);
  }

  private async tryRaise(session: Session, feed: SessionFeed, sample: DetectorSample): Promise<void> {
    const cfg = this.deps.config;
    if (!cfg.raise.enabled) return;
    const sliceDir = path.dirname(session.cgroupDir);
    // The kernel's view of the slice counts neighbours sbd does not watch; the sessions' sum
    // stands in only when the slice's own memory.current cannot be read.
    const others = othersInSlice(sliceDir, sample.currentBytes)
      ?? this.deps.sessions().filter((s) => s.slice === session.slice && s.unit !== session.unit).reduce((sum, s) => sum + currentOf(s.cgroupDir), 0);
    const plan = planRaise({
      highBytes: sample.highBytes, maxBytes: sample.maxBytes, currentBytes: sample.currentBytes,
      sliceHighBytes: sliceHigh(sliceDir), othersBytes: others, memAvailableBytes: memAvailable(),
      step: cfg.raise.step, ceiling: cfg.raise.ceiling, reserve: cfg.raise.reserve, maxMargin: cfg.raise.maxMargin, pageBytes: systemPageSize(),
    });
    if (!plan.raise) {
      this.tell(session, 'no-room', `cannot raise the brake: ${plan.why}; its biggest command is stopped in ${Math.round((feed.state.deadline ? feed.state.deadline.endsAtMs - this.clock.monotonicMs() : 0) / 1000)} s unless it moves`);
      return;
    }
    const figures = { fromBytes: sample.highBytes, toBytes: plan.toBytes, limitedBy: plan.limitedBy, currentBytes: sample.currentBytes };
    const raised = (): void => this.tell(session, 'brake-raised', `brake ${formatSize(sample.highBytes)} -> ${formatSize(plan.toBytes)} (${plan.limitedBy})`, figures);
    if (cfg.observeOnly) return raised();
    const b = this.brake(session.unit);
    b.originalHigh ??= sample.highBytes;
    try {
      await this.setHigh(session, plan.toBytes);
      raised(); // told once systemd has put it in force, never before: a reader may check the cgroup
      feed.setState(resetEpisode(feed.state)); // a new episode: hot onset windows again before the next step
    } catch (err) {
      this.deps.log('warn', 'could not raise the brake', { unit: session.unit, err });
    }
    this.persist(session, feed);
  }

  private scheduleLower(session: Session, feed: SessionFeed): void {
    const b = this.brake(session.unit);
    if (b.lowerTimer) return;
    b.lowerTimer = setTimeout(() => {
      b.lowerTimer = undefined;
      this.background(session, 'lowering the brake', this.lowerStep(session, feed));
    }, this.deps.config.raise.lowerAfterClearS * 1000);
    b.lowerTimer.unref();
  }

  private async lowerStep(session: Session, feed: SessionFeed): Promise<void> {
    const b = this.brake(session.unit);
    if (b.originalHigh === undefined || feed.state.deadline !== undefined || (feed.lastVerdict && feed.lastVerdict.state !== 'clear')) return;
    const to = planLower(session.memoryHigh, b.originalHigh, this.deps.config.raise.step);
    if (to === undefined) return;
    const lowered = (from: number): void => this.tell(session, 'brake-lowered', `brake ${formatSize(from)} -> ${formatSize(to)} (clear for ${this.deps.config.raise.lowerAfterClearS} s; back towards ${formatSize(b.originalHigh ?? to)})`, { fromBytes: from, toBytes: to });
    if (this.deps.config.observeOnly) return lowered(session.memoryHigh);
    const from = session.memoryHigh;
    try {
      await this.setHigh(session, to);
      lowered(from); // once in force, as for a raise
      // Lowering a live cgroup's brake manufactures the very signal: stay quiet for a while.
      feed.setState(muteAfterLowering(feed.state, this.clock.monotonicMs(), this.deps.config.detector));
      if (to === b.originalHigh) b.originalHigh = undefined;
      else this.scheduleLower(session, feed);
    } catch (err) {
      this.deps.log('warn', 'could not lower the brake', { unit: session.unit, err });
    }
    this.persist(session, feed);
  }

  /** A stop of this session's biggest command is under way. */
  stopping(unit: string): boolean {
    return this.brakes.get(unit)?.stopping ?? false;
  }

  /**
   * Stop the session's biggest command: tell, SIGTERM, SIGKILL after the grace. `why` is told
   * with it (the session's own evidence, or the slice's verdict on its culprit); `termToKillS`
   * overrides the configured grace (the machine nearly out of memory will not wait).
   */
  async stopBiggest(session: Session, feed: SessionFeed | undefined, why: Record<string, unknown>, termToKillS = this.deps.config.stop.termToKillS): Promise<void> {
    const b = this.brake(session.unit);
    if (b.stopping) return;
    const procs = readCgroupProcesses(session.cgroupDir);
    // Only a recorded agent is "known": an inferred one keeps the namesake rule (victim/choose.ts).
    const choice = chooseVictim(procs, session.agentFromRecord ? session.agentPid : undefined, rootProcess(procs)?.pid);
    const victim = choice.victim;
    if (!victim) {
      if (!b.expiryTold) this.tell(session, 'nothing-to-stop', 'standing still, but nothing in it may be stopped (only the agent, MCP servers or git)', { protectedPids: choice.protectedPids });
      b.expiryTold = true;
      return;
    }
    const figures = { name: victim.name, pids: victim.pids, rssBytes: victim.rssBytes, brakeBytes: session.memoryHigh, sparedGit: victim.sparedGit, protectedPids: choice.protectedPids, ...why };
    const because = typeof why.because === 'string' ? ` (${why.because})` : '';
    const telling = `stopping ${victim.name} (${victim.pids.length} process${victim.pids.length === 1 ? '' : 'es'}, ${formatSize(victim.rssBytes)}): SIGTERM now, SIGKILL after ${termToKillS} s${because}`;
    if (this.deps.config.observeOnly) {
      if (!b.expiryTold) this.tell(session, 'will-stop', telling, figures);
      b.expiryTold = true;
      return;
    }
    b.expiryTold = false;
    b.stopping = true;
    this.persist(session, feed);
    let report: StopReport | undefined;
    try {
      // pidfds taken when the candidate was chosen, before anything is told or done
      const held = holdProcesses(victim.pids, procs, session.controlGroup);
      const brakeBytes = session.memoryHigh;
      // What is signalled, by identity, and when SIGKILL is due: saved before the signal goes
      // out, so that an sbd restarted in the grace finishes the stop (restore()).
      const byPid = new Map(procs.map((p) => [p.pid, p]));
      b.pendingStop = {
        name: victim.name,
        processes: held.handles.map((h) => byPid.get(h.pid)).filter((p) => p !== undefined).map((p) => ({ pid: p.pid, startTicks: p.startTicks, uid: p.uid })),
        killDueAtMs: dueAtMs(this.clock.monotonicMs(), termToKillS * 1000),
        brakeBytes,
      };
      this.persist(session, feed);
      this.tell(session, 'will-stop', telling, figures);
      report = await stopSubtree(victim, held, brakeBytes, termToKillS * 1000, this.stopDeps(session, brakeBytes));
      if (report.brakeLowered) session.memoryHigh = brakeBytes;
      this.tell(session, 'subtree-stopped', `stopped ${report.name}: ${report.terminated.length} by SIGTERM, ${report.killed.length} by SIGKILL${report.survived.length ? `, ${report.survived.length} still there` : ''}`, { ...figures, ...report });
    } finally {
      this.stopOver(session, feed, report);
    }
  }

  private stopDeps(session: Session, brakeBytes: number): Parameters<typeof stopSubtree>[4] {
    return {
      setBrake: (bytes) => this.deps.manager.setMemory(session.unit, { memoryHigh: bytes }),
      liftBytes: liftForStop(brakeBytes, session.memoryMax, this.deps.config.raise.maxMargin, systemPageSize()),
      log: (msg, fields) => this.deps.log('warn', msg, { unit: session.unit, ...fields }),
    };
  }

  /**
   * A stop is over: the episode starts afresh; when the brake came back down after the kill,
   * that was a lowering of a live cgroup's brake, which manufactures the very signal: mute.
   */
  private stopOver(session: Session, feed: SessionFeed | undefined, report: StopReport | undefined): void {
    const b = this.brake(session.unit);
    b.stopping = false;
    b.pendingStop = undefined;
    if (feed) feed.setState(report?.brakeLowered ? muteAfterLowering(feed.state, this.clock.monotonicMs(), this.deps.config.detector) : resetEpisode(feed.state));
    this.persist(session, feed);
  }

  /**
   * A stop begun by the sbd before a restart: SIGKILL at its due time to what is left of it
   * (identity checked), the brake put back, and told.
   */
  private async finishStop(session: Session, feed: SessionFeed, stop: SavedStop): Promise<void> {
    const b = this.brake(session.unit);
    b.stopping = true;
    b.pendingStop = stop;
    let report: StopReport | undefined;
    try {
      if (this.deps.config.observeOnly) {
        this.tell(session, 'stop-finished', `a stop of ${stop.name} begun before sbd restarted is left as it is: observe-only now`, { ...stop });
        return;
      }
      report = await finishStop(stop, session.controlGroup, session.memoryHigh, this.clock.monotonicMs(), this.stopDeps(session, stop.brakeBytes));
      if (report.brakeLowered) session.memoryHigh = stop.brakeBytes;
      const gone = report.terminated.length + report.skipped.length;
      this.tell(
        session,
        'stop-finished',
        `finished the stop of ${report.name} begun before sbd restarted: ${report.killed.length} by SIGKILL, ${gone} ended or no longer the process signalled${report.survived.length ? `, ${report.survived.length} still there` : ''}; brake ${formatSize(stop.brakeBytes)}`,
        { ...report, brakeBytes: stop.brakeBytes, killDueAtMs: stop.killDueAtMs },
      );
    } finally {
      this.stopOver(session, feed, report);
    }
  }

  /** After a restart: the saved deadline, original brake and stop under way of this session. */
  restore(session: Session, feed: SessionFeed, saved: SavedSession): void {
    if (saved.invocationId !== session.invocationId) return; // a new session behind the same name
    this.brake(session.unit).originalHigh = saved.originalHigh;
    // A stop between SIGTERM and SIGKILL when sbd died: finished, not started again (on this
    // boot only: its due time is this boot's monotonic clock, and its processes live nowhere else).
    if (saved.stop && saved.bootId !== undefined && saved.bootId === this.clock.bootId()) return this.background(session, 'finishing a stop begun before the restart', this.finishStop(session, feed, saved.stop));
    // A stop was under way when sbd died: it is not started again; the episode starts afresh.
    if (saved.stopping) return;
    const restored = restoreDeadline(saved, this.clock.bootId(), this.clock.monotonicMs());
    if ('dropped' in restored) {
      this.tell(session, 'deadline-dropped', `the deadline saved before sbd restarted is dropped: ${restored.dropped}; if the session still stands still, a new one starts with the whole grace`);
      return this.persist(session, feed);
    }
    if (restored.deadline) feed.setState({ ...feed.state, deadline: restored.deadline, hotWindows: this.deps.config.detector.hotWindowsToStall });
  }
}
