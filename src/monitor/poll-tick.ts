/**
 * A poll's tick, judged from what systemd tells of its service (issue 13): the receipt
 * (ExecMainCode, ExecMainStatus, Result) once the service has ended, each run counted once (by
 * its InvocationID); then what the monitor does next: nothing, back off, return to its interval,
 * or be suspended after maxConsecutiveFailures in a row (monitor/backoff.ts). The agent is told
 * once when a failure streak begins, once when it ends and once on suspension, never per tick.
 * Pure: the unit's properties and the record's counts in, decisions out.
 */
import type { UnitInfo } from '../systemd/types';
import { afterTick } from './backoff';

export interface TickEnd {
  /** The run's InvocationID: one tick, counted once. */
  invocationId: string;
  ok: boolean;
  exit: { code: string; status: number };
  /** What happened, in the agent's words ("exited with status 1", "timed out after 10 s"). */
  what: string;
}

const RUNNING = new Set(['active', 'activating', 'deactivating', 'reloading']);
/** ExecMainCode as systemd gives it (CLD_EXITED 1, CLD_KILLED 2, CLD_DUMPED 3). */
const CODE: Record<number, string> = { 1: 'exited', 2: 'killed', 3: 'dumped' };
/** ssh's own failures (could not connect, authenticate or resolve) exit 255: the remote probe never ran. */
export const SSH_OWN_FAILURE = 255;

/**
 * The tick that has just ended, or undefined while it runs, when the unit is gone (no receipt
 * to read), when it has never run, or when this run was counted already (`counted`).
 */
export function tickEnded(info: UnitInfo | undefined, counted: string | undefined, timeoutS: number, kind: 'poll' | 'ssh'): TickEnd | undefined {
  if (!info || RUNNING.has(info.activeState)) return undefined;
  const id = info.invocationId;
  if (id === '' || /^0+$/.test(id) || id === counted) return undefined;
  const code = CODE[info.execMainCode ?? 0] ?? 'exited';
  const status = info.execMainStatus ?? 0;
  const ok = info.result === 'success';
  let what: string;
  if (info.result === 'timeout') what = `timed out after ${timeoutS} s and was stopped`;
  else if (code !== 'exited') what = `was killed by signal ${status}`;
  else if (kind === 'ssh' && status === SSH_OWN_FAILURE) what = `exited with status ${status} (ssh itself failed: the host could not be reached or refused the login)`;
  else if (!ok && status === 0) what = `failed (${info.result ?? 'unknown'})`;
  else what = `exited with status ${status}`;
  return { invocationId: id, ok, exit: { code, status }, what };
}

export type NextCadence = 'keep' | 'backoff' | 'interval' | 'suspend';

export interface TickDecision {
  consecutiveFailures: number;
  /** keep: the timer runs on; backoff: a longer wait now; interval: back to every intervalS; suspend: the timer stops. */
  next: NextCadence;
  /** What to tell the agent, when anything. */
  notice?: { kind: 'failing' | 'recovered' | 'suspended'; text: string };
}

/** What one tick's end means for the monitor (pure). */
export function decideTick(consecutiveFailures: number, tick: TickEnd, maxConsecutiveFailures: number): TickDecision {
  const step = afterTick({ consecutive: consecutiveFailures, suspended: false }, tick.ok, maxConsecutiveFailures);
  const n = step.state.consecutive;
  if (tick.ok) {
    if (consecutiveFailures === 0) return { consecutiveFailures: 0, next: 'keep' };
    return { consecutiveFailures: 0, next: 'interval', notice: { kind: 'recovered', text: `the probe succeeded again after ${consecutiveFailures} failed tick${consecutiveFailures === 1 ? '' : 's'}` } };
  }
  if (step.suspendNow) {
    return {
      consecutiveFailures: n, next: 'suspend',
      notice: { kind: 'suspended', text: `suspended after ${n} failed tick${n === 1 ? '' : 's'} in a row; the last ${tick.what}. sbctl monitor recover approve runs it again` },
    };
  }
  if (consecutiveFailures === 0) return { consecutiveFailures: n, next: 'backoff', notice: { kind: 'failing', text: `the probe ${tick.what}; retrying less often (backoff), suspended after ${maxConsecutiveFailures} failures in a row` } };
  return { consecutiveFailures: n, next: 'backoff' };
}
