/**
 * The processes of one cgroup, read from /proc. A process may exit between two reads: it is
 * simply left out, never an error.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { CgroupGoneError, readCgroupFile } from '../cgroup/read';
import { parsePids } from '../cgroup/parse';
import { parseCmdline, parseStat, parseStatusUid } from './stat';
import { systemPageSize } from './system';


export interface ProcInfo {
  pid: number;
  ppid: number;
  comm: string;
  uid: number;
  rssBytes: number;
  cpuTicks: number;
  startTicks: number;
  /** argv, for matching only (MCP servers); never logged or shown. */
  argv: string[];
}

/** The process exited under us (ENOENT from /proc, ESRCH): never an error of ours. */
export function processGone(err: unknown): boolean {
  const code = (err as NodeJS.ErrnoException | undefined)?.code;
  return code === 'ENOENT' || code === 'ESRCH';
}

/** One process, or undefined when it has exited. */
export function readProcess(pid: number, procRoot = '/proc'): ProcInfo | undefined {
  const dir = path.join(procRoot, String(pid));
  try {
    const stat = parseStat(fs.readFileSync(path.join(dir, 'stat'), 'utf8'), path.join(dir, 'stat'));
    const uid = parseStatusUid(fs.readFileSync(path.join(dir, 'status'), 'utf8'), path.join(dir, 'status'));
    const argv = parseCmdline(fs.readFileSync(path.join(dir, 'cmdline')));
    return { pid, ppid: stat.ppid, comm: stat.comm, uid, rssBytes: stat.rssPages * systemPageSize(), cpuTicks: stat.cpuTicks, startTicks: stat.startTicks, argv };
  } catch (err) {
    if (processGone(err)) return undefined;
    throw err;
  }
}

/** The pids of the cgroup at `dir` (cgroup.procs: thread-group leaders); [] when the cgroup is gone. */
function cgroupPids(dir: string): number[] {
  try {
    return parsePids(readCgroupFile(dir, 'cgroup.procs'), path.join(dir, 'cgroup.procs'));
  } catch (err) {
    if (err instanceof CgroupGoneError) return [];
    throw err;
  }
}

/** The processes of the cgroup at `dir` (cgroup.procs: thread-group leaders). [] when the cgroup is gone. */
export function readCgroupProcesses(dir: string, procRoot = '/proc'): ProcInfo[] {
  const pids = cgroupPids(dir);
  return pids.map((pid) => readProcess(pid, procRoot)).filter((p): p is ProcInfo => p !== undefined);
}

/** A process's size, from /proc/PID/stat alone: what status shows (the biggest command). */
export type ProcSize = Pick<ProcInfo, 'pid' | 'comm' | 'rssBytes'>;

/**
 * The processes of the cgroup at `dir` with their sizes only: one file a process (stat), where
 * readCgroupProcesses reads three (stat, status, cmdline) for the uid and argv that status never
 * shows. [] when the cgroup is gone.
 */
export function readCgroupSizes(dir: string, procRoot = '/proc'): ProcSize[] {
  const pids = cgroupPids(dir);
  const sizes: ProcSize[] = [];
  for (const pid of pids) {
    const file = path.join(procRoot, String(pid), 'stat');
    try {
      const stat = parseStat(fs.readFileSync(file, 'utf8'), file);
      sizes.push({ pid, comm: stat.comm, rssBytes: stat.rssPages * systemPageSize() });
    } catch (err) {
      if (!processGone(err)) throw err;
    }
  }
  return sizes;
}

/**
 * The session's root: the process whose parent is outside the cgroup; among several, the
 * oldest. Undefined for an empty cgroup.
 */
export function rootProcess(procs: readonly ProcInfo[]): ProcInfo | undefined {
  const pids = new Set(procs.map((p) => p.pid));
  const roots = procs.filter((p) => !pids.has(p.ppid));
  return roots.sort((a, b) => a.startTicks - b.startTicks || a.pid - b.pid)[0];
}
