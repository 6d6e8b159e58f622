/**
 * A calm parent answers for its sessions' agents (issue 15, item 4). The freeze watch's sweep
 * read every agent's /proc stat once a minute: at 1,000 idle sessions that one sweep was all of
 * sbd's idle cost that grew with the sessions (bench/RESULTS.md, session 11). An agent's CPU time
 * is part of its cgroup's, and so of the parent's (the sessions' slice): when the whole parent
 * used less than peggedCpuShare of one core since the last sweep, no agent under it can have
 * used that much, and the minute was a calm one for each of them without reading any. One read of
 * the parent's cpu.stat a minute stands for a thousand.
 *
 * What it gives up: the next read of an agent starts a new interval, so a session that begins to
 * spin right after a calm minute is told pegged at most one check later than before (pegged is
 * judged over peggedForS, 5 minutes by default).
 */
import type { FreezeState } from './policy';

/** A parent cgroup's cpu.stat `usage_usec`, taken at a monotonic time. */
export interface CpuReading {
  atMs: number;
  usageUs: number;
}

/**
 * Whether the parent used less than `peggedCpuShare` of one core from `prev` to `now`. Not when
 * there is no earlier reading, no time between them, or the counter went back (a new cgroup of
 * the same name): then each agent is read.
 */
export function calmOver(prev: CpuReading | undefined, now: CpuReading, peggedCpuShare: number): boolean {
  if (prev === undefined) return false;
  const elapsedMs = now.atMs - prev.atMs;
  const usedMs = (now.usageUs - prev.usageUs) / 1000;
  if (elapsedMs <= 0 || usedMs < 0) return false;
  return usedMs < peggedCpuShare * elapsedMs;
}

/**
 * Whether a calm parent may answer for this session: only when nothing is open (a recovery is
 * told with what its agent shows) and it has no heartbeat (missing and silent are judged from the
 * heartbeat and the agent's life, which the parent's CPU does not tell).
 */
export const answeredByCalm = (state: FreezeState | undefined, hasHeartbeat: boolean): boolean =>
  !hasHeartbeat && (state === undefined || state.open.length === 0);

/**
 * The step of a session a calm parent answered for: a calm interval, which ends any busy streak;
 * the next read of its agent starts a new interval. The same state when there is nothing to end.
 */
export function calmStep(state: FreezeState): FreezeState {
  if (state.cpuFrom === undefined && state.share === undefined && state.busySinceMs === undefined) return state;
  return { ...state, cpuFrom: undefined, share: undefined, busySinceMs: undefined };
}
