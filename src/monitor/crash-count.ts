/**
 * sbd's own crash-loop fuse for a spawn, beside systemd's (unit.ts). systemd's StartLimitBurst
 * counts starts within CRASH_LOOP_INTERVAL_US (60 s): a spawn that runs half a minute before each
 * crash never makes three starts in 60 s, so systemd restarted it forever and its agent was never
 * told (guest 55's node programs, 20 s to start and crash under load, session 15). sbd counts the
 * crashes systemd restarted (the unit's NRestarts, read on each of its changes) on the monotonic
 * clock, and after SLOW_CRASH_LOOP.crashes within SLOW_CRASH_LOOP.withinMs it stops the unit and
 * quarantines the spawn, as systemd's fuse does (pure here; monitor/runners/spawn.ts acts).
 */

/**
 * Four crashes within 30 minutes. One more than systemd's burst (CRASH_LOOP_BURST): a fast loop
 * reaches systemd's fuse first (NRestarts 3, the unit failed with its start limit hit, told as
 * systemd's), and a slow one this. Half an hour: a dev server that dies four times in it needs
 * its agent, not a fifth restart; runs of up to 7 minutes each still count.
 */
export const SLOW_CRASH_LOOP = { crashes: 4, withinMs: 30 * 60_000 } as const;

/** What a record keeps of its unit's crashes: the NRestarts last counted and when each counted
 * crash was seen (CLOCK_MONOTONIC ms, meaningful on `bootId` only). */
export interface CrashCount {
  restartsSeen: number;
  bootId: string;
  atMonoMs: number[];
}

/**
 * The count after the unit showed `nRestarts` at `nowMs`; undefined when nothing new was
 * restarted. A count of another boot is void. A unit whose NRestarts went down is a new unit of
 * the same name (recover approve starts one): its restarts are counted from 0. Restarts made
 * while sbd was away are counted as seen now (their times are not known).
 */
export function countCrashes(prev: CrashCount | undefined, nRestarts: number | undefined, nowMs: number, bootId: string, fuse: { crashes: number; withinMs: number } = SLOW_CRASH_LOOP): { next: CrashCount; blown: boolean } | undefined {
  const n = nRestarts ?? 0;
  const base = prev !== undefined && prev.bootId === bootId ? prev : undefined;
  const seen = base?.restartsSeen ?? 0;
  if (n === seen) return undefined;
  const fresh = n > seen ? n - seen : n;
  const kept = n > seen ? (base?.atMonoMs ?? []).filter((at) => nowMs - at < fuse.withinMs) : [];
  const atMonoMs = [...kept, ...Array.from({ length: Math.min(fresh, fuse.crashes) }, () => nowMs)].slice(-fuse.crashes);
  return { next: { restartsSeen: n, bootId, atMonoMs }, blown: atMonoMs.length >= fuse.crashes };
}
