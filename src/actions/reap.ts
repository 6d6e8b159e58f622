/**
 * Reaping: what a session left running (its scope's processes besides the agent, and every
 * process of ours carrying its marker elsewhere), or what works inside a checkout. SIGTERM, then
 * SIGKILL after the grace, each step through a pidfd; one row per process, never its arguments.
 * The caller of sbctl and its ancestors are never signalled: they are listed as spared, with why.
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
  /** What became of it; "would stop" in a dry run; "spared" when it is sbctl's caller or above. */
  outcome: Outcome | 'would stop' | 'spared';
  /** Why it was spared (only on spared rows). */
  why?: string;
}

/** A target left alone, and why. */
export interface Spared {
  proc: ProcInfo;
  why: string;
}

/**
 * Split the targets into those to stop and those spared because they are the caller (the
 * first of `ancestors`, nearest first) or one of its ancestors: stopping the shell that runs
 * sbctl, or the terminal above it, is never what was asked. Pure.
 */
export function spareAncestors(targets: readonly ProcInfo[], ancestors: readonly number[]): { targets: ProcInfo[]; spared: Spared[] } {
  const rank = new Map(ancestors.map((pid, i) => [pid, i]));
  const out: { targets: ProcInfo[]; spared: Spared[] } = { targets: [], spared: [] };
  for (const p of targets) {
    const i = rank.get(p.pid);
    if (i === undefined) out.targets.push(p);
    else out.spared.push({ proc: p, why: i === 0 ? "sbctl's caller" : "an ancestor of sbctl's caller" });
  }
  return out;
}

/** The union of process lists, each pid once, without `exclude`. */
export function mergeTargets(lists: readonly ProcInfo[][], exclude: ReadonlySet<number>): ProcInfo[] {
  const byPid = new Map<number, ProcInfo>();
  for (const list of lists) for (const p of list) if (!exclude.has(p.pid)) byPid.set(p.pid, p);
  return [...byPid.values()].sort((a, b) => a.pid - b.pid);
}

/** Stop `targets` (or only say so in a dry run); the spared get rows of their own, by pid. */
export async function reap(targets: readonly ProcInfo[], termToKillMs: number, dryRun: boolean, spared: readonly Spared[] = []): Promise<ReapRow[]> {
  const now = uptimeS();
  const row = (p: ProcInfo, outcome: ReapRow['outcome']): ReapRow => ({ pid: p.pid, program: p.comm, rssBytes: p.rssBytes, ...ageAndCpu(p, now), outcome });
  const sparedRows = spared.map((s) => ({ ...row(s.proc, 'spared'), why: s.why }));
  const byPid = (a: ReapRow, b: ReapRow): number => a.pid - b.pid;
  if (dryRun) return [...targets.map((p) => row(p, 'would stop')), ...sparedRows].sort(byPid);
  const outcome = targets.length === 0 ? new Map<number, Outcome>() : await terminate(holdProcesses(targets.map((p) => p.pid), targets), termToKillMs);
  return [...targets.map((p) => row(p, outcome.get(p.pid) ?? 'skipped')), ...sparedRows].sort(byPid);
}
