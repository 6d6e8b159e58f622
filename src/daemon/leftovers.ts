/**
 * When a session's agent exits (its pidfd turns readable), what it left is stopped: the rest of
 * its scope, and every process of ours carrying its marker anywhere else. SIGTERM, SIGKILL after
 * the grace, one procs-reaped log line and one incident. With reap disabled, or observe-only,
 * the leftovers are told about instead.
 */
import { mergeTargets, reap } from '../actions/reap';
import type { Config } from '../config/schema';
import { monitorIdOfUnit } from '../monitor/unit';
import { Pidfd } from '../native';
import { readCgroupProcesses, readProcess } from '../proc/table';
import type { Session } from '../sessions/registry';
import type { Incidents } from './incidents';
import { MarkerScans } from './marker-scans';

interface Watched {
  agent: Pidfd | undefined;
  reaped: boolean;
}

export class LeftoverReaper {
  private readonly watched = new Map<string, Watched>();

  constructor(
    private readonly config: Config,
    /** Its procs-reaped incident is also the one log line that lists what was stopped. */
    private readonly incidents: Incidents,
    private readonly onError: (s: Session, err: unknown) => void,
    /** Sessions ending together share one pass over /proc (tests pass their own). */
    private readonly scans = new MarkerScans(),
  ) {}

  /** Follow the session's agent; reap when it exits (at once, when it has exited already). */
  watch(s: Session): void {
    if (s.agentPid === undefined) return; // no agent known: nothing to follow
    // A monitor's own unit (a spawn, a poll's tick) in the sessions' slice: its main process is
    // the monitor's work, not an agent, and systemd starts the next (a restart, the next tick) in
    // the same cgroup. Reaped there, the next one was killed while systemd's executor set it up,
    // before it carried the monitor's marker (guest 49 on Debian 13: ticks SIGTERMed, named "9").
    // Its unit's KillMode=control-group ends what a tick or a spawn leaves.
    if (monitorIdOfUnit(s.unit) !== undefined) return;
    let agent: Pidfd | undefined;
    try {
      agent = Pidfd.open(s.agentPid);
      if (readProcess(s.agentPid)?.startTicks !== s.agentStartTicks) {
        agent.close(); // the pid belongs to another process now: the agent is gone
        agent = undefined;
      }
    } catch {
      agent = undefined;
    }
    this.watched.set(s.unit, { agent, reaped: false });
    if (agent === undefined) this.reapInBackground(s, false);
    else {
      void agent.exited.then(() => this.reapInBackground(s, false));
      agent.unref();
    }
  }

  /** The session's scope is gone: if its agent exited unreaped, reap what carries its marker. */
  forget(s: Session): void {
    const w = this.watched.get(s.unit);
    if (w && !w.reaped && w.agent?.hasExited()) this.reapInBackground(s, true);
    w?.agent?.close();
    this.watched.delete(s.unit);
  }

  private reapInBackground(s: Session, scopeGone: boolean): void {
    this.reapSession(s, scopeGone).catch((err: unknown) => this.onError(s, err));
  }

  private async reapSession(s: Session, scopeGone: boolean): Promise<void> {
    const w = this.watched.get(s.unit);
    if (!w || w.reaped) return;
    w.reaped = true;
    const exclude = new Set(s.agentPid === undefined ? [] : [s.agentPid]);
    const marked = await this.scans.find(s.id);
    const targets = mergeTargets([scopeGone ? [] : readCgroupProcesses(s.cgroupDir), marked], exclude);
    if (targets.length === 0) return;
    const base = { unit: s.unit, session: s.id, observeOnly: this.config.observeOnly };
    if (!this.config.reap.enabled || !s.reap || this.config.observeOnly) {
      const rows = await reap(targets, 0, true);
      this.incidents.tell({ ...base, atMs: Date.now(), type: 'leftovers', message: `the agent exited and left ${rows.length} process${rows.length === 1 ? '' : 'es'} running (${rows.map((r) => `${r.program} ${r.pid}`).join(', ')}); not stopped: ${this.config.observeOnly ? 'observe-only' : s.reap ? 'reap is off in the config' : 'the session was started with --no-reap'}`, procs: rows });
      return;
    }
    const startedAtMs = Date.now();
    const rows = await reap(targets, this.config.reap.termToKillS * 1000, false);
    this.incidents.tell({ ...base, atMs: Date.now(), startedAtMs, type: 'procs-reaped', message: `the agent exited; stopped what it left: ${rows.map((r) => `${r.program} ${r.pid} (${r.outcome})`).join(', ')}`, procs: rows });
  }
}
