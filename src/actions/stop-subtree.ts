/**
 * Stopping the chosen subtree (design.md §5): SIGTERM deepest first under the session's brake,
 * and after the grace, SIGKILL to what is left. The brake is lifted only just before SIGKILL
 * (older kernels can leave a SIGKILLed task stuck in memory.high reclaim; never up to MemoryMax,
 * see liftForStop) and put back once the kill is done: during the grace the command stays
 * braked, since sbd has just found there was no room. A stop begun by an sbd that restarted
 * since is finished from its record (finishStop).
 */
import type { SavedStop } from '../daemon/state-file';
import type { Candidate } from '../victim/choose';
import { msUntilDue } from './kill-due';
import { type Held, type Outcome, holdProcesses, terminate } from './terminate';

export interface StopDeps {
  /** Set the session's MemoryHigh. */
  setBrake(bytes: number): Promise<void>;
  /** The brake just before SIGKILL (brake-policy liftForStop: below MemoryMax by the margin). */
  liftBytes: number;
  log(msg: string, fields: Record<string, unknown>): void;
}

export interface StopReport {
  name: string;
  /** Exited after SIGTERM. */
  terminated: number[];
  /** Needed SIGKILL. */
  killed: number[];
  /** Not signalled: gone before we got to it, or no longer the process chosen. */
  skipped: number[];
  /** Still there after SIGKILL (stuck in the kernel). */
  survived: number[];
  /** The brake was put back down after being above it (a lowering: the detector mutes). */
  brakeLowered: boolean;
}

/**
 * How long SIGKILL waits for systemd to lift the brake: the lift only helps older kernels reap
 * a killed task; the kill itself must not hang on a slow or stuck bus (a call under load in the
 * lab's guest takes well under a second).
 */
export const LIFT_WAIT_MS = 2_000;

/**
 * The brake around the kill: `lift` just before SIGKILL, `putBack` after. `fromBytes` is the
 * brake in force now (above `brakeBytes` when an sbd that died had lifted it already).
 */
function brakeAroundKill(brakeBytes: number, fromBytes: number, deps: StopDeps): { lift(): Promise<void>; putBack(): Promise<boolean> } {
  let above = fromBytes > brakeBytes;
  let differs = fromBytes !== brakeBytes;
  return {
    lift: async () => {
      if (deps.liftBytes <= brakeBytes) return;
      above = differs = true; // a failed call may have landed: put it back anyway
      let timer: NodeJS.Timeout | undefined;
      const waited = new Promise<void>((resolve) => {
        timer = setTimeout(() => {
          deps.log('the brake is not lifted yet: SIGKILL goes out without waiting longer', { waitedMs: LIFT_WAIT_MS });
          resolve();
        }, LIFT_WAIT_MS);
      });
      const lifting = deps.setBrake(deps.liftBytes).catch((err: unknown) => deps.log('could not lift the brake before SIGKILL', { err }));
      await Promise.race([lifting, waited]);
      clearTimeout(timer);
    },
    putBack: async () => {
      if (!differs) return false;
      try {
        await deps.setBrake(brakeBytes);
        return above;
      } catch (err) {
        deps.log('could not put the brake back after stopping', { err });
        return false;
      }
    },
  };
}

function report(name: string, pids: readonly number[], outcome: Map<number, Outcome>, brakeLowered: boolean): StopReport {
  const having = (o: Outcome): number[] => pids.filter((pid) => outcome.get(pid) === o);
  return { name, terminated: having('terminated'), killed: having('killed'), skipped: having('skipped'), survived: having('survived'), brakeLowered };
}

export async function stopSubtree(candidate: Candidate, held: Held, brakeBytes: number, termToKillMs: number, deps: StopDeps): Promise<StopReport & { rssBytes: number }> {
  const brake = brakeAroundKill(brakeBytes, brakeBytes, deps);
  let outcome = new Map<number, Outcome>();
  let lowered = false;
  try {
    outcome = await terminate(held, termToKillMs, { beforeKill: brake.lift });
  } finally {
    lowered = await brake.putBack();
  }
  return { ...report(candidate.name, candidate.pids, outcome, lowered), rssBytes: candidate.rssBytes };
}

/**
 * Finish a stop that an sbd which has restarted since began: SIGKILL at the due time to what of
 * it is left (each process checked to be the one signalled: pid, start time, uid, still in the
 * session's cgroup; never SIGTERM again), and the brake put back from `currentBrakeBytes`.
 * `nowMs` is CLOCK_MONOTONIC now, the clock of `stop.killDueAtMs`.
 */
export async function finishStop(stop: SavedStop, controlGroup: string, currentBrakeBytes: number, nowMs: number, deps: StopDeps): Promise<StopReport> {
  const pids = stop.processes.map((p) => p.pid);
  const brake = brakeAroundKill(stop.brakeBytes, currentBrakeBytes, deps);
  let outcome = new Map<number, Outcome>();
  let lowered = false;
  try {
    const held = holdProcesses(pids, stop.processes, controlGroup);
    outcome = await terminate(held, msUntilDue(stop.killDueAtMs, nowMs), { termSent: true, beforeKill: brake.lift });
  } finally {
    lowered = await brake.putBack();
  }
  return report(stop.name, pids, outcome, lowered);
}
