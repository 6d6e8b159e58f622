/**
 * The freeze watch of every session: one check every freeze.checkS for all of them (the agent's
 * own /proc stat, the heartbeat's mtime and first word; the open commands only once silence is
 * possible), and at once when a heartbeat file is written or touched (inotify, through the
 * service's FileWatch). A round reads no agent under a parent cgroup that was calm since the
 * last one (freeze/calm.ts). Tells incidents; never stops anything.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { pickKeys } from '../cgroup/parse';
import { readOptional } from '../cgroup/read';
import { type CpuReading, answeredByCalm, calmOver, calmStep } from '../freeze/calm';
import type { Config } from '../config/schema';
import { type FreezeContext, freezeMessage } from '../freeze/message';
import { openCommands } from '../freeze/open-commands';
import { type FreezeState, type Heartbeat, type Observation, type SavedFreeze, type Telling, freezeStep, initialFreeze, processViewNeeded, restoredFreeze, savedFreezeOf } from '../freeze/policy';
import { HeldStats } from '../proc/held-stat';
import { systemClockTicks } from '../proc/system';
import { readCgroupProcesses } from '../proc/table';
import type { Session } from '../sessions/registry';
import { monotonicMs } from '../util/clock';
import type { Incidents } from './incidents';

interface Agent {
  pid: number;
  name: string;
  cpuMs: number;
}

/**
 * The agent from its own /proc/PID/stat (utime + stime: its threads, not its children), held open
 * for the session's life (HeldStats); undefined when it has exited, is a zombie, or its pid now
 * names another process (start time).
 */
function readAgent(s: Session, stats: HeldStats): Agent | undefined {
  if (s.agentPid === undefined) return undefined;
  const st = stats.read(s.unit, s.agentPid);
  if (st === undefined || (s.agentStartTicks !== undefined && st.startTicks !== s.agentStartTicks) || st.state === 'Z' || st.state === 'X') return undefined;
  return { pid: st.pid, name: st.comm, cpuMs: (st.cpuTicks * 1000) / systemClockTicks() };
}

function readHeartbeat(file: string | undefined): { heartbeat: Heartbeat | undefined; claimsWorking: boolean } {
  if (file === undefined) return { heartbeat: undefined, claimsWorking: false };
  try {
    const { mtimeMs } = fs.statSync(file);
    const ageMs = Date.now() - mtimeMs; // an mtime is wall-clock: so is this age (see freeze/policy.ts)
    const head = Buffer.alloc(16);
    const fd = fs.openSync(file, 'r');
    const n = fs.readSync(fd, head, 0, head.length, 0);
    fs.closeSync(fd);
    return { heartbeat: { mtimeMs, ageMs }, claimsWorking: /^working\b/.test(head.toString('utf8', 0, n)) };
  } catch {
    return { heartbeat: undefined, claimsWorking: false };
  }
}

/** Where the agent writes: its terminal or its log file (stdout, stderr, stdin in turn); not a pipe, not /dev/null. */
function outputOf(pid: number): string | undefined {
  for (const fd of [1, 2, 0]) {
    try {
      const target = fs.readlinkSync(`/proc/${pid}/fd/${fd}`);
      if (target.startsWith('/') && target !== '/dev/null') return target;
    } catch {
      /* closed, or the agent is gone */
    }
  }
  return undefined;
}

/** A session's step, told after the round's saves are durable. */
interface Step {
  session: Session;
  tellings: Telling[];
  agent: Agent | undefined;
  /** Its open signals changed and were saved. */
  saved: boolean;
}

export class FreezeWatch {
  private readonly states = new Map<string, FreezeState>();
  /** Each agent's /proc/PID/stat, held open while its session lasts. */
  private readonly stats = new HeldStats();
  private readonly timer: NodeJS.Timeout;
  /** Each parent cgroup's CPU time at the last round (calm.ts). */
  private readonly parentCpu = new Map<string, CpuReading>();

  constructor(
    private readonly config: Config,
    private readonly incidents: Incidents,
    private readonly sessions: () => Iterable<Session>,
    /** A round's failed checks: the first one's unit and error, and how many failed. */
    private readonly onError: (unit: string, err: Error, failed: number) => void = () => {},
    /** Keeps a session's open signals across a restart of sbd (undefined: none open); called when they change. */
    private readonly save: (s: Session, saved: SavedFreeze | undefined) => void = () => {},
    /** Makes the saves so far durable: once per round (or check) that saved, before anything is told. */
    private readonly commit: () => void = () => {},
  ) {
    this.timer = setInterval(() => this.sweep(), config.freeze.checkS * 1000);
    this.timer.unref();
  }

  /**
   * The round over every session. A session whose check fails (EMFILE holding its agent's stat,
   * an unreadable /proc) is skipped: the others are still checked, sbd goes on, and one line a
   * round tells it. Where the session's parent cgroup was calm since the last round (calm.ts),
   * its agent is not read.
   */
  sweep(): void {
    const atMs = monotonicMs();
    const calm = new Map<string, boolean>();
    let failed = 0;
    let first: { unit: string; err: Error } | undefined;
    const fail = (s: Session, err: unknown): void => {
      failed++;
      first ??= { unit: s.unit, err: err as Error };
    };
    const steps: Step[] = [];
    for (const s of this.sessions()) {
      try {
        const state = this.states.get(s.unit);
        if (answeredByCalm(state, s.heartbeat !== undefined) && this.parentCalm(calm, path.dirname(s.cgroupDir), atMs)) {
          if (state !== undefined) this.states.set(s.unit, calmStep(state));
          continue;
        }
        steps.push(this.step(s));
      } catch (err) {
        fail(s, err);
      }
    }
    // one durable write for the round's changes, before any of them is told
    if (steps.some((x) => x.saved)) this.commit();
    for (const x of steps) {
      try {
        this.tellAll(x);
      } catch (err) {
        fail(x.session, err);
      }
    }
    for (const parent of this.parentCpu.keys()) if (!calm.has(parent)) this.parentCpu.delete(parent);
    if (first) this.onError(first.unit, first.err, failed);
  }

  /** Whether `parent` used less than peggedCpuShare of a core since the last round: read once a round. */
  private parentCalm(seen: Map<string, boolean>, parent: string, atMs: number): boolean {
    const known = seen.get(parent);
    if (known !== undefined) return known;
    let isCalm = false;
    try {
      const text = readOptional(parent, 'cpu.stat');
      if (text !== undefined) {
        const now = { atMs, usageUs: pickKeys(text, `${parent}/cpu.stat`, ['usage_usec'] as const).usage_usec };
        isCalm = calmOver(this.parentCpu.get(parent), now, this.config.freeze.peggedCpuShare);
        this.parentCpu.set(parent, now);
      }
    } catch {
      // the parent gone, or its cpu.stat unreadable: its sessions' agents are each read, as
      // before calm.ts, and their own checks say what fails
      this.parentCpu.delete(parent);
    }
    seen.set(parent, isCalm);
    return isCalm;
  }

  /** A check now (the heartbeat was written, say). */
  check(s: Session): void {
    const x = this.step(s);
    if (x.saved) this.commit();
    this.tellAll(x);
  }

  private tellAll(x: Step): void {
    for (const t of x.tellings) this.tell(x.session, t, x.agent);
  }

  /** One session's observation and step: its state kept, its open signals saved when they changed; nothing told yet. */
  private step(s: Session): Step {
    const cfg = this.config.freeze;
    const state = this.states.get(s.unit) ?? initialFreeze();
    const agent = readAgent(s, this.stats);
    const beat = readHeartbeat(s.heartbeat);
    const atMs = monotonicMs();
    const partial = { atMs, agentCpuMs: agent?.cpuMs, ...beat };
    // Not needed (see processViewNeeded): any value gives the same step; 1 is the calm one.
    const commandsOpen = agent && processViewNeeded(state, partial, cfg).commands ? openCommands(readCgroupProcesses(s.cgroupDir), agent.pid).commands.length : 1;
    const o: Observation = { ...partial, commandsOpen };
    const [next, tellings] = freezeStep(state, o, cfg);
    this.states.set(s.unit, next);
    const saved = next.open.join() !== state.open.join();
    if (saved) this.save(s, savedFreezeOf(next));
    return { session: s, tellings, agent, saved };
  }

  /** What a person needs besides the policy's facts, read only when something is told. */
  private context(s: Session, agent: Agent | undefined): FreezeContext {
    const view = agent ? openCommands(readCgroupProcesses(s.cgroupDir), agent.pid) : undefined;
    return {
      session: s.id,
      unit: s.unit,
      agent,
      hasHeartbeat: s.heartbeat !== undefined,
      commands: view?.commands.map((p) => p.comm), // names only: arguments carry tokens
      mcpServers: view?.mcpServers ?? 0,
      languageServers: view?.languageServers ?? 0,
      output: agent ? outputOf(agent.pid) : undefined,
    };
  }

  private tell(s: Session, t: Telling, agent: Agent | undefined): void {
    const base = { unit: s.unit, session: s.id, atMs: Date.now(), observeOnly: this.config.observeOnly };
    if (t.kind === 'recovered') {
      const why = agent ? '' : ': its agent has exited';
      this.incidents.tell({ ...base, type: 'recovered', message: `session ${s.id} recovered (was ${t.was.join(' and ')})${why}`, was: t.was });
      return;
    }
    const c = this.context(s, agent);
    const figures = {
      open: t.open,
      agentPid: agent?.pid ?? null,
      agentCpuMin: agent ? Math.round(agent.cpuMs / 6000) / 10 : null,
      heartbeatAgeS: t.facts.beatAgeMs === undefined ? null : Math.round(t.facts.beatAgeMs / 1000),
      commandsOpen: c.commands ?? null,
    };
    if (t.kind === 'signal') this.incidents.tell({ ...base, ...figures, type: t.signal, message: freezeMessage([t.signal, ...t.open.filter((o) => o !== t.signal)], t.facts, c) });
    else this.incidents.tell({ ...base, ...figures, type: t.open[0] ?? 'pegged', message: freezeMessage(t.open, t.facts, c, true), reminder: true });
  }

  /**
   * After a restart: the signals its predecessor told of this session and saved, still open (their
   * recovery is told by this sbd). `sameBoot`: the saved times are on this boot's monotonic clock.
   */
  restore(unit: string, saved: SavedFreeze, sameBoot: boolean): void {
    this.states.set(unit, restoredFreeze(saved, sameBoot, monotonicMs(), this.config.freeze.peggedForS * 1000));
  }

  forget(unit: string): void {
    this.states.delete(unit);
    this.stats.release(unit);
  }

  stop(): void {
    clearInterval(this.timer);
    this.stats.releaseAll();
  }
}
