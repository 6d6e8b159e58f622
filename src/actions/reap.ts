/**
 * Reaping: what a session left running (its scope's processes besides the agent, and every
 * process of ours carrying its marker elsewhere), or what works inside a checkout. SIGTERM, then
 * SIGKILL after the grace, each step through a pidfd; one row per process, never its arguments.
 */
import { ageAndCpu, uptimeS } from '../proc/scan';
import type { ProcInfo } from '../proc/table';
import { type Outcome, holdProcesses, terminate } from './terminate';

export interface ReapRow {
  pid: number;
  program: string;
  rssBytes: number;
  cpuS: number;
  ageS: number;
  /** What became of it; "would stop" in a dry run. */
  outcome: Outcome | 'would stop';
}

/** The union of process lists, each pid once, without `exclude`. */
export function mergeTargets(lists: readonly ProcInfo[][], exclude: ReadonlySet<number>): ProcInfo[] {
  const byPid = new Map<number, ProcInfo>();
  for (const list of lists) for (const p of list) if (!exclude.has(p.pid)) byPid.set(p.pid, p);
  return [...byPid.values()].sort((a, b) => a.pid - b.pid);
}

export async function reap(targets: readonly ProcInfo[], termToKillMs: number, dryRun: boolean): Promise<ReapRow[]> {
  const now = uptimeS();
  const rows = (outcome: (p: ProcInfo) => ReapRow['outcome']): ReapRow[] =>
    targets.map((p) => ({ pid: p.pid, program: p.comm, rssBytes: p.rssBytes, ...ageAndCpu(p, now), outcome: outcome(p) }));
  if (dryRun) return rows(() => 'would stop');
  const outcome = await terminate(holdProcesses(targets.map((p) => p.pid), targets), termToKillMs);
  return rows((p) => outcome.get(p.pid) ?? 'skipped');
}
