/**
 * When the SIGKILL of a stop is due, as persisted in the state file so that a restarted sbd
 * kills at the same moment the one that died would have. Wall-clock milliseconds (Date.now()),
 * like the saved deadline: the one place to change when persisted times get another clock.
 */

/** The due time of SIGKILL for a SIGTERM sent at `termSentAtMs`, `termToKillMs` of grace. */
export function dueAtMs(termSentAtMs: number, termToKillMs: number): number {
  return termSentAtMs + termToKillMs;
}

/** How long until `due` from `nowMs` (0 once it has passed). */
export function msUntilDue(due: number, nowMs: number = Date.now()): number {
  return Math.max(0, due - nowMs);
}
