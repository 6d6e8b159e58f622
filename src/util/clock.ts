/**
 * sbd's clock. Every interval, window, deadline and mute is measured on CLOCK_MONOTONIC; the wall
 * clock (Date.now()) is only for what people read (an incident's time of day). The wall clock is
 * stepped by `date -s`, NTP or a person, and a step made every window as long (or as negative) as
 * the step: the episode and its deadline started over, or no window counted until it caught up.
 *
 * Why CLOCK_MONOTONIC (Node's process.hrtime on Linux, the clock libuv's timers run on):
 *  - one clock per boot, shared by every process: a deadline saved by one sbd keeps running for
 *    the next sbd of the same boot (performance.now() starts at 0 in each process);
 *  - never stepped (NTP only slews its rate, by at most 0.05 %);
 *  - it stops during suspend, and so do the session and the kernel's PSI stall time (which is
 *    what the windows measure): a suspended night neither counts as grace nor as a window.
 *    CLOCK_BOOTTIME would count it and stop a command right after resume, before one window
 *    could show whether it moves.
 * Its values mean nothing on another boot: what is saved carries the boot id (bootId()).
 */
import * as fs from 'node:fs';

/** Milliseconds on CLOCK_MONOTONIC (since boot, suspend not counted), with sub-ms precision. */
export function monotonicMs(): number {
  return Number(process.hrtime.bigint()) / 1e6;
}

const BOOT_ID_FILE = '/proc/sys/kernel/random/boot_id';
let cachedBootId: string | null | undefined;

/**
 * This boot's id (a new random UUID at each boot): monotonic times saved under another boot id
 * are not comparable with ours. undefined when the kernel does not tell (then no saved time is
 * trusted).
 */
export function bootId(): string | undefined {
  if (cachedBootId === undefined) {
    try {
      cachedBootId = fs.readFileSync(BOOT_ID_FILE, 'utf8').trim() || null;
    } catch {
      cachedBootId = null;
    }
  }
  return cachedBootId ?? undefined;
}

/** The clock as the daemon's parts take it (tests pass their own). */
export interface SbdClock {
  monotonicMs(): number;
  bootId(): string | undefined;
}

export const systemClock: SbdClock = { monotonicMs, bootId };
