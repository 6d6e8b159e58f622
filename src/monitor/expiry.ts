/**
 * A monitor's expiresAt (issue 13) on the clock timers run on (pure). expiresAt is a time of day
 * people give (wall clock); a timer runs on CLOCK_MONOTONIC (util/clock.ts). The time left is read
 * from the wall clock once, when the monitor first starts on this boot, and kept as a monotonic
 * deadline with the boot id in its record:
 *  - a step of the wall clock afterwards (NTP, `date -s`) moves nothing: the deadline is the one
 *    computed at the start, before and after a restart of sbd on the same boot;
 *  - on another boot (or a record without one) the monotonic times mean nothing: the time left is
 *    read from the wall clock again, once;
 *  - setTimeout takes at most MAX_TIMER_MS: a longer wait is armed in steps, each re-reading the
 *    monotonic clock (Node fires a longer one at once: an expiry weeks ahead would end the monitor
 *    as it starts).
 */

/** setTimeout's longest delay (2^31 - 1 ms, 24.8 days). */
export const MAX_TIMER_MS = 2 ** 31 - 1;

export interface SavedExpiry {
  bootId: string;
  atMonoMs: number;
}

export interface Clocks {
  wallMs: number;
  monoMs: number;
  bootId: string | undefined;
}

/** The monitor's monotonic deadline: the saved one on the same boot, else read anew from the
 * wall clock (`save` then says what to keep in the record; undefined when the boot is unknown). */
export function expiryDeadline(expiresAtMs: number, saved: SavedExpiry | undefined, now: Clocks): { atMonoMs: number; save: SavedExpiry | undefined } {
  if (saved !== undefined && now.bootId !== undefined && saved.bootId === now.bootId) return { atMonoMs: saved.atMonoMs, save: undefined };
  const atMonoMs = now.monoMs + (expiresAtMs - now.wallMs);
  return { atMonoMs, save: now.bootId === undefined ? undefined : { bootId: now.bootId, atMonoMs } };
}

/** When it expires, told as the wall clock reads now (recovery's plan and people speak wall clock). */
export function expiresAtAsNowMs(expiresAtMs: number, saved: SavedExpiry | undefined, now: Clocks): number {
  return now.wallMs + (expiryDeadline(expiresAtMs, saved, now).atMonoMs - now.monoMs);
}

/** The next timer's delay: what is left, in steps setTimeout can take; 0 when due. */
export function timerDelayMs(atMonoMs: number, monoNowMs: number): number {
  return Math.min(MAX_TIMER_MS, Math.max(0, atMonoMs - monoNowMs));
}

/** A start whose expiresAt is already past is refused (it would end as it begins). */
export function pastExpiry(expiresAt: string | undefined, wallNowMs: number): string | undefined {
  if (expiresAt === undefined) return undefined;
  return Date.parse(expiresAt) <= wallNowMs ? `expiresAt ${expiresAt} has already passed (it is ${new Date(wallNowMs).toISOString()} here): give a time in the future` : undefined;
}
