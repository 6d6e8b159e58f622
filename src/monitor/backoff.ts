/**
 * After a failed tick (issue 13): wait longer each time, with jitter so that many monitors that
 * failed together (a network blip) do not retry together; after maxConsecutiveFailures in a
 * row, suspend and tell once. A success resets both. Pure: the random draw is passed in.
 */

/** The longest wait between two tries of a failing monitor: 30 min, then it is only retried that often. */
export const MAX_BACKOFF_S = 30 * 60;
/** How far a wait may stray from its nominal value: ±20 %, enough to spread a herd. */
const JITTER = 0.2;

export interface FailureState {
  consecutive: number;
  suspended: boolean;
}

export const noFailures = (): FailureState => ({ consecutive: 0, suspended: false });

/** Seconds until the next try after `consecutive` failures in a row; `draw` is uniform in [0, 1). */
export function backoffS(intervalS: number, consecutive: number, draw: number): number {
  if (consecutive <= 0) return intervalS;
  const nominal = Math.min(MAX_BACKOFF_S, intervalS * 2 ** consecutive);
  return nominal * (1 - JITTER + 2 * JITTER * draw);
}

export type TickOutcome = { state: FailureState; suspendNow: boolean };

/** Step the failure count with one tick's result (pure). */
export function afterTick(state: FailureState, ok: boolean, maxConsecutiveFailures: number): TickOutcome {
  if (ok) return { state: noFailures(), suspendNow: false };
  const consecutive = state.consecutive + 1;
  const suspendNow = !state.suspended && consecutive >= maxConsecutiveFailures;
  return { state: { consecutive, suspended: state.suspended || suspendNow }, suspendNow };
}
