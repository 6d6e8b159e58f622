/**
 * The one way sbd and sbctl end processes: through pidfds taken up front and checked to still be
 * the processes meant (same start time, our uid, and where given, the cgroup); SIGTERM to all,
 * SIGKILL and process_mrelease to what is left after the grace; each outcome reported.
 */
import * as fs from 'node:fs';
import { parseProcCgroup } from '../cgroup/parse';
import { Pidfd } from '../native';
import { type ProcInfo, readProcess } from '../proc/table';

export type Outcome = 'terminated' | 'killed' | 'survived' | 'skipped';

/** After SIGKILL, how long to wait for the exits before reporting survivors. */
const AFTER_KILL_WAIT_MS = 5_000;

function inCgroup(pid: number, controlGroup: string): boolean {
  try {
    return parseProcCgroup(fs.readFileSync(`/proc/${pid}/cgroup`, 'utf8'), `/proc/${pid}/cgroup`) === controlGroup;
  } catch {
    return false;
  }
}

export interface Held {
  handles: Pidfd[];
  /** Gone already, or no longer the process meant (another start time, uid or cgroup). */
  skipped: number[];
}

/** What tells a process from a stranger that got its pid later. */
export type ProcIdentity = Pick<ProcInfo, 'pid' | 'startTicks' | 'uid'>;

/**
 * Take pidfds for `pids` (in this order), keeping only those that are still the processes
 * `meant` describes (same start time and uid, ours). With the pidfd held, a pid can no longer be
 * reused under us.
 */
export function holdProcesses(pids: readonly number[], meant: readonly ProcIdentity[], controlGroup?: string): Held {
  const byPid = new Map(meant.map((p) => [p.pid, p]));
  const uid = process.getuid?.();
  const held: Held = { handles: [], skipped: [] };
  for (const pid of pids) {
    let h: Pidfd;
    try {
      h = Pidfd.open(pid);
    } catch {
      held.skipped.push(pid);
      continue;
    }
    const now = readProcess(pid);
    const then = byPid.get(pid);
    if (!now || !then || now.startTicks !== then.startTicks || now.uid !== uid || now.uid !== then.uid || (controlGroup !== undefined && !inCgroup(pid, controlGroup))) {
      h.close();
      held.skipped.push(pid);
      continue;
    }
    held.handles.push(h);
  }
  return held;
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

export interface TerminateOptions {
  /** SIGTERM went out already (from an sbd that has restarted since): only wait, then kill. */
  termSent?: boolean;
  /** Called once, just before SIGKILL, when something is left to kill. */
  beforeKill?: () => Promise<void>;
}

/**
 * SIGTERM all (in the order held), SIGKILL what is left after `termToKillMs`; closes the handles.
 */
export async function terminate(held: Held, termToKillMs: number, opts: TerminateOptions = {}): Promise<Map<number, Outcome>> {
  const outcome = new Map<number, Outcome>(held.skipped.map((pid) => [pid, 'skipped']));
  try {
    for (const h of opts.termSent ? [] : held.handles) {
      try {
        h.signal('SIGTERM');
      } catch {
        /* exited meanwhile: its pidfd says so below */
      }
    }
    await waitAll(held.handles, termToKillMs);
    let left = held.handles.filter((h) => !h.hasExited());
    if (left.length > 0 && opts.beforeKill) {
      await opts.beforeKill();
      left = left.filter((h) => !h.hasExited());
    }
    for (const h of held.handles) if (!left.includes(h)) outcome.set(h.pid, 'terminated');
    for (const h of left) {
      try {
        h.signal('SIGKILL');
        h.mrelease();
      } catch {
        /* ESRCH: exited after all; EINVAL from mrelease: not dying yet, the kill stands */
      }
    }
    await waitAll(left, AFTER_KILL_WAIT_MS);
    for (const h of left) outcome.set(h.pid, h.hasExited() ? 'killed' : 'survived');
  } finally {
    for (const h of held.handles) h.close();
  }
  return outcome;
}
