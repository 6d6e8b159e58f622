/**
 * Scans of this user's own processes: those carrying a session's marker in their environment
 * (found after setsid, timeout, nohup or a move to another unit), and those working inside a
 * path. Other users' processes are never returned: only processes of our uid are looked at
 * (their environ and fds are not ours to read anyway).
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { systemClockTicks } from './system';
import { type ProcInfo, readProcess } from './table';
import { environValue } from './stat';

/** The environment variable every process of a session carries (design.md §2). */
export const MARKER = 'SESSIONBRAKE_SESSION';

/** All processes of this uid (our own process excluded). */
export function ownProcesses(procRoot = '/proc'): ProcInfo[] {
  const uid = process.getuid?.();
  const out: ProcInfo[] = [];
  for (const name of fs.readdirSync(procRoot)) {
    if (!/^\d+$/.test(name) || Number(name) === process.pid) continue;
    const p = readProcess(Number(name), procRoot);
    if (p && p.uid === uid) out.push(p);
  }
  return out;
}

/** The marker value of a process, or undefined (none, or it exited). */
export function markerOf(pid: number, procRoot = '/proc'): string | undefined {
  try {
    return environValue(fs.readFileSync(path.join(procRoot, String(pid), 'environ')), MARKER);
  } catch {
    return undefined;
  }
}

/** The variable that marks a process as a monitor's (its unit's fate is the monitor manager's). */
export const MONITOR_MARKER = 'SESSIONBRAKE_MONITOR';

/**
 * This user's processes marked with one of `ids`, by id, except those of the sessions' monitors:
 * a monitor's unit ends with the session unless detached (monitor/manager.ts), not by the reaper.
 * One pass over /proc whatever the number of ids: each process's environ is read once (another
 * user's fails at once: not ours to read), and only a marked one's stat, status and cmdline. Two
 * hundred sessions ending together scanned /proc two hundred times, reading four files of every
 * process each time, and starved sbd's watchdog (issue 15, item 5).
 */
export function markedWithAny(ids: ReadonlySet<string>, procRoot = '/proc'): Map<string, ProcInfo[]> {
  const found = new Map<string, ProcInfo[]>();
  if (ids.size === 0) return found;
  const uid = process.getuid?.();
  for (const name of fs.readdirSync(procRoot)) {
    if (!/^\d+$/.test(name) || Number(name) === process.pid) continue;
    let environ: Buffer;
    try {
      environ = fs.readFileSync(`${procRoot}/${name}/environ`);
    } catch {
      continue; // exited, or not ours
    }
    const id = environValue(environ, MARKER);
    if (id === undefined || !ids.has(id) || environValue(environ, MONITOR_MARKER) !== undefined) continue;
    let p: ProcInfo | undefined;
    try {
      p = readProcess(Number(name), procRoot);
    } catch {
      continue; // unreadable (an odd /proc entry): that process only, not every session's reap
    }
    if (!p || p.uid !== uid) continue;
    const list = found.get(id);
    if (list) list.push(p);
    else found.set(id, [p]);
  }
  return found;
}

/** This user's processes whose marker is `id`, except those of the session's monitors (markedWithAny). */
export function markedWith(id: string, procRoot = '/proc'): ProcInfo[] {
  return markedWithAny(new Set([id]), procRoot).get(id) ?? [];
}

/** True when `p` is `root` or below it (both absolute and normalised). */
export function isUnder(p: string, root: string): boolean {
  const r = root.endsWith('/') ? root : `${root}/`;
  return p === root || p.startsWith(r);
}

export interface Holder {
  proc: ProcInfo;
  /** Why it holds the path: its working directory is inside, or it has a file inside open. */
  how: 'cwd' | 'open file';
  session: string | undefined;
}

/**
 * The processes of this user working inside `dir`: their cwd is under it, or one of their open
 * fds points under it. (Memory maps are not looked at: a mapped file alone does not stop a
 * checkout's removal from being safe for git.)
 */
export function holdersOf(dir: string, procRoot = '/proc'): Holder[] {
  const out: Holder[] = [];
  for (const proc of ownProcesses(procRoot)) {
    const base = path.join(procRoot, String(proc.pid));
    let how: Holder['how'] | undefined;
    try {
      if (isUnder(fs.readlinkSync(path.join(base, 'cwd')), dir)) how = 'cwd';
      else {
        for (const fd of fs.readdirSync(path.join(base, 'fd'))) {
          let target: string;
          try {
            target = fs.readlinkSync(path.join(base, 'fd', fd));
          } catch {
            continue;
          }
          if (target.startsWith('/') && isUnder(target, dir)) {
            how = 'open file';
            break;
          }
        }
      }
    } catch {
      continue; // exited meanwhile
    }
    if (how) out.push({ proc, how, session: markerOf(proc.pid, procRoot) });
  }
  return out;
}

/** Seconds since boot, from /proc/uptime. */
export function uptimeS(procRoot = '/proc'): number {
  return Number(fs.readFileSync(path.join(procRoot, 'uptime'), 'utf8').split(' ')[0]);
}

/** A process's age in seconds and CPU used in seconds. */
export function ageAndCpu(p: ProcInfo, nowUptimeS: number): { ageS: number; cpuS: number } {
  const ticks = systemClockTicks();
  return { ageS: Math.max(0, nowUptimeS - p.startTicks / ticks), cpuS: p.cpuTicks / ticks };
}
