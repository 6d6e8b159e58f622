/**
 * When the SIGKILL of a stop is due, as persisted in the state file so that a restarted sbd
 * kills at the same moment the one that died would have. CLOCK_MONOTONIC milliseconds
 * (util/clock monotonicMs), like the saved deadline; the record carries the boot id.
 */

/** The due time of SIGKILL for a SIGTERM sent at `termSentAtMs`, `termToKillMs` of grace. */
export function dueAtMs(termSentAtMs: number, termToKillMs: number): number {
  return termSentAtMs + termToKillMs;
}

/** How long until `due` from `nowMs` (0 once it has passed). */
export function msUntilDue(due: number, nowMs: number): number {
  return Math.max(0, due - nowMs);
}
