/**
 * Stopping the chosen subtree (design.md §5): pidfds taken at once, each checked to still be the
 * process that was chosen (same start time, same cgroup, our uid); the brake lifted (older
 * kernels can leave a SIGKILLed task stuck in memory.high reclaim); SIGTERM deepest first; after
 * the grace, SIGKILL and process_mrelease to what is left; the brake restored.
 */
import * as fs from 'node:fs';
import { parseProcCgroup } from '../cgroup/parse';
import { Pidfd } from '../native';
import type { ProcInfo } from '../proc/table';
import { readProcess } from '../proc/table';
import type { Candidate } from '../victim/choose';

export interface StopDeps {
  /** Set the session's MemoryHigh (Infinity lifts it). */
  setBrake(bytes: number): Promise<void>;
  termToKillMs: number;
  log(msg: string, fields: Record<string, unknown>): void;
}

export interface StopReport {
  name: string;
  rssBytes: number;
  /** Exited after SIGTERM. */
  terminated: number[];
  /** Needed SIGKILL. */
  killed: number[];
  /** Not signalled: gone before we got to it, or no longer the process chosen. */
  skipped: number[];
  /** Still there after SIGKILL (stuck in the kernel). */
  survived: number[];
}

/** After SIGKILL, how long to wait for the exits before reporting survivors. */
const AFTER_KILL_WAIT_MS = 5_000;

function inCgroup(pid: number, controlGroup: string): boolean {
  try {
    return parseProcCgroup(fs.readFileSync(`/proc/${pid}/cgroup`, 'utf8'), `/proc/${pid}/cgroup`) === controlGroup;
  } catch {
    return false;
  }
}

/** Open pidfds for the candidate's pids, keeping only those still the processes chosen. */
export function takePidfds(candidate: Candidate, procs: readonly ProcInfo[], controlGroup: string): { handles: Pidfd[]; skipped: number[] } {
  const chosen = new Map(procs.map((p) => [p.pid, p]));
  const uid = process.getuid?.();
  const handles: Pidfd[] = [];
  const skipped: number[] = [];
  for (const pid of candidate.pids) {
    let h: Pidfd;
    try {
      h = Pidfd.open(pid);
    } catch {
      skipped.push(pid); // exited meanwhile
      continue;
    }
    // With the pidfd held the pid cannot be reused: check it is still the process we chose.
    const now = readProcess(pid);
    const then = chosen.get(pid);
    if (!now || !then || now.startTicks !== then.startTicks || now.uid !== uid || !inCgroup(pid, controlGroup)) {
      h.close();
      skipped.push(pid);
      continue;
    }
    handles.push(h);
  }
  return { handles, skipped };
}

function waitAll(handles: readonly Pidfd[], ms: number): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(resolve, ms);
    void Promise.all(handles.map((h) => h.exited)).then(() => {
      clearTimeout(timer);
      resolve();
    });
  });
}

/** Signal `handles` (deepest first, as chosen) and report what became of each. */
export async function stopSubtree(candidate: Candidate, handles: Pidfd[], skipped: number[], brakeBytes: number, deps: StopDeps): Promise<StopReport> {
  const report: StopReport = { name: candidate.name, rssBytes: candidate.rssBytes, terminated: [], killed: [], skipped: [...skipped], survived: [] };
  await deps.setBrake(Infinity).catch((err: unknown) => deps.log('could not lift the brake before stopping', { err: String(err) }));
  try {
    for (const h of handles) {
      try {
        h.signal('SIGTERM');
      } catch {
        /* exited between choice and signal: counted below */
      }
    }
    await waitAll(handles, deps.termToKillMs);
    const left = handles.filter((h) => !h.hasExited());
    report.terminated.push(...handles.filter((h) => !left.includes(h)).map((h) => h.pid));
    for (const h of left) {
      try {
        h.signal('SIGKILL');
        h.mrelease();
      } catch {
        /* ESRCH: it exited after all; EINVAL from mrelease: not dying yet, the kill stands */
      }
    }
    await waitAll(left, AFTER_KILL_WAIT_MS);
    for (const h of left) (h.hasExited() ? report.killed : report.survived).push(h.pid);
  } finally {
    for (const h of handles) h.close();
    await deps.setBrake(brakeBytes).catch((err: unknown) => deps.log('could not restore the brake after stopping', { err: String(err) }));
  }
  return report;
}
