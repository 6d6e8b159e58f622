/**
 * The freeze watch of every session: one check every freeze.checkS for all of them (cpu.stat,
 * the heartbeat's mtime and first word; the agent and the open commands only once the heartbeat
 * is stale), and at once when a heartbeat file is written (inotify, through the service's
 * FileWatch). Tells incidents; never stops anything.
 */
import * as fs from 'node:fs';
import { readCpuUsage } from '../cgroup/read';
import type { Config } from '../config/schema';
import { type FreezeState, type Observation, type Telling, freezeStep, initialFreeze, processViewNeeded } from '../freeze/policy';
import { readCgroupProcesses, readProcess } from '../proc/table';
import type { Session } from '../sessions/registry';
import { type BeatSeen, beatSeen } from '../freeze/heartbeat-clock';
import { type SbdClock, systemClock } from '../util/clock';
import type { Incidents } from './incidents';

/** `now` and the heartbeat's time are monotonic ms; `beatAt` turns the file's mtime into one. */
function observe(s: Session, now: number, cfg: Config['freeze'], beatAt: (mtimeMs: number) => number): Observation | undefined {
  let cpuUsageUs: number;
  try {
    cpuUsageUs = readCpuUsage(s.cgroupDir) ?? 0;
  } catch {
    return undefined; // the session is ending
  }
  let heartbeatMs: number | undefined;
  let claimsWorking = false;
  if (s.heartbeat !== undefined) {
    try {
      heartbeatMs = beatAt(fs.statSync(s.heartbeat).mtimeMs);
      const head = Buffer.alloc(16);
      const fd = fs.openSync(s.heartbeat, 'r');
      const n = fs.readSync(fd, head, 0, head.length, 0);
      fs.closeSync(fd);
      claimsWorking = /^working\b/.test(head.toString('utf8', 0, n));
    } catch {
      heartbeatMs = undefined;
    }
  }
  // Not needed (see processViewNeeded): any value gives the same step; these are the calm ones.
  const need = processViewNeeded(heartbeatMs, claimsWorking, now, cfg);
  return {
    atMs: now,
    cpuUsageUs,
    heartbeatMs,
    claimsWorking,
    commandsOpen: need.commands ? readCgroupProcesses(s.cgroupDir).filter((p) => p.pid !== s.agentPid).length : 1,
    agentAlive: need.agent ? s.agentPid !== undefined && readProcess(s.agentPid) !== undefined : true,
  };
}

export class FreezeWatch {
  private readonly states = new Map<string, FreezeState>();
  /** Each session's heartbeat as last seen, dated on the monotonic clock. */
  private readonly beats = new Map<string, BeatSeen>();
  private readonly timer: NodeJS.Timeout;

  constructor(
    private readonly config: Config,
    private readonly incidents: Incidents,
    private readonly sessions: () => Iterable<Session>,
    private readonly clock: SbdClock = systemClock,
  ) {
    this.timer = setInterval(() => {
      for (const s of this.sessions()) this.check(s);
    }, config.freeze.checkS * 1000);
    this.timer.unref();
  }

  /** A check now (the heartbeat was written, say). */
  check(s: Session): void {
    const now = this.clock.monotonicMs();
    const o = observe(s, now, this.config.freeze, (mtimeMs) => {
      const seen = beatSeen(this.beats.get(s.unit), mtimeMs, Date.now(), now);
      this.beats.set(s.unit, seen);
      return seen.writtenAtMs;
    });
    if (o === undefined) return;
    const [next, tellings] = freezeStep(this.states.get(s.unit) ?? initialFreeze(), o, this.config.freeze);
    this.states.set(s.unit, next);
    for (const t of tellings) this.tell(s, t);
  }

  private tell(s: Session, t: Telling): void {
    const base = { unit: s.unit, session: s.id, atMs: Date.now(), observeOnly: this.config.observeOnly };
    if (t.kind === 'signal') this.incidents.tell({ ...base, type: t.signal, message: `${t.signal}: ${t.reason}${t.open.length > 1 ? ` (open: ${t.open.join(', ')})` : ''}`, open: t.open });
    else if (t.kind === 'reminder') this.incidents.tell({ ...base, type: t.open[0] ?? 'pegged', message: `reminder: still ${t.open.join(' and ')}`, open: t.open, reminder: true });
    else this.incidents.tell({ ...base, type: 'recovered', message: `recovered (was ${t.was.join(', ')})`, was: t.was });
  }

  forget(unit: string): void {
    this.states.delete(unit);
    this.beats.delete(unit);
  }

  stop(): void {
    clearInterval(this.timer);
  }
}
