/**
 * sd_notify for a Type=notify unit: READY=1, STATUS=, and WATCHDOG=1 at half the watchdog interval
 * (sd_watchdog_enabled(3): only when WATCHDOG_PID is unset or ours).
 */
import { sdNotify } from '../native';

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

/** Send WATCHDOG=1 at half the interval; returns a stop function. */
export function startWatchdog(env: NodeJS.ProcessEnv, pid: number): () => void {
  const interval = watchdogIntervalMs(env, pid);
  if (interval === undefined) return () => {};
  const timer = setInterval(() => notify('WATCHDOG=1'), interval / 2);
  return () => clearInterval(timer);
}
