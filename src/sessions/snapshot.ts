/**
 * What a session looks like right now, from its cgroup files and /proc: what `sbctl status`
 * shows. Read by sbd, or by sbctl itself when sbd is not running.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { parseLimit, parsePressure, parseRequiredKeys } from '../cgroup/parse';
import { readCgroupFile, readCurrentBytes, readOptional } from '../cgroup/read';
import { type ProcSize, readCgroupSizes } from '../proc/table';

export interface SessionSnapshot {
  currentBytes: number;
  highBytes: number;
  maxBytes: number;
  swapMaxBytes: number;
  /** (anon + shmem) / current: near 1 means memory the kernel cannot simply drop. */
  anonShare: number;
  /** The kernel's 10 s average of the `full` memory pressure, as a share (0..1); null without PSI. */
  pressureFullAvg10: number | null;
  processes: number;
  /** The heaviest process by RSS: its comm only, never its arguments. */
  biggest: { name: string; pid: number; rssBytes: number } | null;
  /** Seconds since the heartbeat file was written; null without one or when it is missing. */
  heartbeatAgeS: number | null;
}

/** What is read from the cgroup's files and /proc: everything but the heartbeat. */
export type SessionFigures = Omit<SessionSnapshot, 'heartbeatAgeS'>;

function limitOrInfinity(dir: string, name: string): number {
  const text = readOptional(dir, name);
  return text === undefined ? Infinity : parseLimit(text, path.join(dir, name));
}

export function heartbeatAge(file: string | undefined, nowMs: number): number | null {
  if (file === undefined) return null;
  try {
    return Math.max(0, (nowMs - fs.statSync(file).mtimeMs) / 1000);
  } catch {
    return null;
  }
}

/** The heaviest process of a list (by RSS), or null. */
export function heaviest(procs: readonly ProcSize[]): SessionSnapshot['biggest'] {
  let best: ProcSize | undefined;
  for (const p of procs) if (best === undefined || p.rssBytes > best.rssBytes) best = p;
  return best ? { name: best.comm, pid: best.pid, rssBytes: best.rssBytes } : null;
}

/** The figures of the cgroup at `dir`. Throws CgroupGoneError when the session just ended. */
export function readSessionFigures(dir: string): SessionFigures {
  const current = readCurrentBytes(dir);
  const stat = parseRequiredKeys(readCgroupFile(dir, 'memory.stat'), path.join(dir, 'memory.stat'), ['anon', 'shmem'] as const);
  const pressureText = readOptional(dir, 'memory.pressure'); // absent on a kernel without PSI
  const pressure = pressureText === undefined ? undefined : parsePressure(pressureText, path.join(dir, 'memory.pressure'));
  const procs = readCgroupSizes(dir);
  return {
    currentBytes: current,
    highBytes: limitOrInfinity(dir, 'memory.high'),
    maxBytes: limitOrInfinity(dir, 'memory.max'),
    swapMaxBytes: limitOrInfinity(dir, 'memory.swap.max'),
    anonShare: current > 0 ? Math.min(1, (stat.anon + stat.shmem) / current) : 0,
    pressureFullAvg10: pressure === undefined ? null : (pressure.full?.avg10 ?? 0) / 100,
    processes: procs.length,
    biggest: heaviest(procs),
  };
}

/** Snapshot the cgroup at `dir`. Throws CgroupGoneError when the session just ended. */
export function snapshotSession(dir: string, heartbeat: string | undefined, nowMs: number): SessionSnapshot {
  return { ...readSessionFigures(dir), heartbeatAgeS: heartbeatAge(heartbeat, nowMs) };
}
