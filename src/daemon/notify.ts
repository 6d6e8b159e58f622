/**
 * sd_notify for a Type=notify unit: READY=1, STATUS=, and WATCHDOG=1 at half the watchdog interval
 * (sd_watchdog_enabled(3): only when WATCHDOG_PID is unset or ours).
 */
import { sdNotify } from '../native';
import { monotonicMs } from '../util/clock';

export function notify(payload: string): boolean {
  try {
    return sdNotify(payload);
  } catch {
    return false; // systemd went away: nothing to tell
  }
}

/** The watchdog interval in ms asked of this process, or undefined. */
export function watchdogIntervalMs(env: NodeJS.ProcessEnv, pid: number): number | undefined {
  const usec = Number(env.WATCHDOG_USEC);
  if (!Number.isFinite(usec) || usec <= 0) return undefined;
  if (env.WATCHDOG_PID !== undefined && env.WATCHDOG_PID !== '' && Number(env.WATCHDOG_PID) !== pid) return undefined;
  return usec / 1000;
}

/**
 * How late a watchdog ping came (ms after it was due), or undefined when not late enough to tell
 * (pure): more than a quarter of the watchdog interval. The event loop was then held at least that
 * long, and up to half an interval longer (a hold that began just after a ping); systemd kills
 * sbd when no ping comes within the interval, and a kill tells nothing: this warns before one.
 */
export function pingLateMs(sinceLastMs: number, everyMs: number, intervalMs: number): number | undefined {
  const late = sinceLastMs - everyMs;
  return late > intervalMs / 4 ? late : undefined;
}

/** Send WATCHDOG=1 at half the interval; `onLate` hears of a ping that came late (pingLateMs).
 * Returns a stop function. */
export function startWatchdog(env: NodeJS.ProcessEnv, pid: number, onLate: (lateMs: number, intervalMs: number) => void = () => {}, clock: () => number = monotonicMs): () => void {
  const interval = watchdogIntervalMs(env, pid);
  if (interval === undefined) return () => {};
  const every = interval / 2;
  let last = clock();
  const timer = setInterval(() => {
    notify('WATCHDOG=1');
    const now = clock();
    const late = pingLateMs(now - last, every, interval);
    last = now;
    if (late !== undefined) onLate(late, interval);
  }, every);
  return () => clearInterval(timer);
}
