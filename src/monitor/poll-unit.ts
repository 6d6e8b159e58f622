/**
 * A poll (and an ssh probe, which is a poll of `ssh`) is a transient timer plus a transient
 * service of the session's slice (issue 13, design.md §12), started together in one
 * StartTransientUnit call: the timer is the unit, the service its auxiliary unit, as
 * `systemd-run --on-active` builds them. Built here as plain data (pure; the D-Bus layer wraps
 * them in variants). Each systemd property does one job, so sbd re-implements none of them:
 *
 * The timer (sb-monitor-ID.timer) is the clock:
 *  - TimersMonotonic OnActiveSec: the first tick, counted from the timer's start;
 *  - TimersMonotonic OnUnitInactiveSec=intervalS: each next tick, counted from the end of the
 *    last one. Ticks never overlap (a timer never starts a service that still runs), and after a
 *    tick that failed sbd has a whole interval to put the backoff in place before the next one:
 *    counted from a tick's start (OnUnitActiveSec, before session 15), a tick slowed past the
 *    interval on a busy machine was followed by the next at once (guest 49 on Debian 13, with
 *    the sessions' slice yielding the CPU: 0.5 s after the failure, three ticks for two);
 *  - after a failed tick, the backoff (monitor/backoff.ts) is a timer of its own, put in the
 *    place of the first one: OnActiveSec and OnUnitInactiveSec = the shortest wait of the
 *    backoff, RandomizedDelayUSec = the width of its jitter, drawn by systemd anew at every
 *    elapse (so monitors that failed together do not retry together, even while sbd is away);
 *  - AccuracyUSec: how late systemd may fire to batch wakeups (its default, 1 min, would
 *    stretch a 5 s poll to a minute).
 *
 * The service (sb-monitor-ID.service) is one tick:
 *  - Type=exec: the tick fails at once when the program cannot be executed;
 *  - RuntimeMaxUSec=timeoutS: the per-tick timeout, enforced by systemd (Result "timeout"); it
 *    applies to an active service, so not Type=oneshot, where it has no effect;
 *  - TimeoutStopUSec: a probe that ignores SIGTERM at the timeout is SIGKILLed soon after;
 *  - Slice, Environment SESSIONBRAKE_SESSION / SESSIONBRAKE_MONITOR, MemoryHigh: the tick is the
 *    session's work, braked like a spawn, and the leftover reaper leaves it to the monitors;
 *  - KillMode=control-group: a stop or a timeout ends the tick's whole tree;
 *  - StandardOutputFileToAppend / StandardErrorFileToAppend: each tick's output appended to the
 *    monitor's file, which sbd follows by inotify (notifyOn, coalesce, maxLines as for a tail);
 *  - ExecMainCode / ExecMainStatus / Result (read back when systemd signals the change): the
 *    tick's receipt;
 *  - CollectMode=inactive-or-failed: while its timer lives the service is kept (the timer
 *    references it), so each tick's receipt can be read; once the timer is stopped systemd
 *    unloads the service even after a failed tick, so a stopped or suspended poll leaves no unit.
 */
import { backoffS } from './backoff';
import { type SessionWork, type UnitProperty, sessionWorkProperties } from './unit';

/** The timer may fire this late, so systemd can batch wakeups: 1 s, small beside the 5 s shortest interval. */
export const TICK_ACCURACY_US = 1_000_000n;
/** Between SIGTERM at the timeout and SIGKILL: 5 s. A probe is a quick look with nothing to flush. */
export const TICK_KILL_GRACE_US = 5_000_000n;

/** The shortest per-tick timeout given to systemd: 1 ms (0 would not be a timeout at all). */
const MIN_TIMEOUT_S = 0.001;

export const pollTimerName = (monitorId: string): string => `sb-monitor-${monitorId}.timer`;
export const pollServiceName = (monitorId: string): string => `sb-monitor-${monitorId}.service`;

const us = (s: number): bigint => BigInt(Math.max(0, Math.round(s * 1_000_000)));

/** When the ticks come: every intervalS (the first after firstS), or a failing probe's backoff. */
export type Cadence =
  | { kind: 'interval'; firstS: number; intervalS: number }
  | { kind: 'backoff'; afterS: number; jitterS: number };

/**
 * The cadence after `consecutiveFailures` failed ticks in a row (pure): the interval when none,
 * else backoffS's range, from its lowest draw to its highest (systemd draws within it).
 * `firstS`: the first tick of an interval cadence (0 at a start, intervalS after a recovery).
 */
export function cadenceFor(intervalS: number, consecutiveFailures: number, firstS: number): Cadence {
  if (consecutiveFailures <= 0) return { kind: 'interval', firstS, intervalS };
  const lowest = backoffS(intervalS, consecutiveFailures, 0);
  const highest = backoffS(intervalS, consecutiveFailures, 1);
  return { kind: 'backoff', afterS: lowest, jitterS: highest - lowest };
}

export interface PollUnitInput extends SessionWork {
  handle: string;
  label?: string | undefined;
  /** "poll" or "ssh": said in the Description. */
  kind: string;
  timeoutS: number;
}

// names, never arguments: they can carry tokens, and Description shows in every listing
const describe = (i: PollUnitInput, what: string): string => `sessionbrake ${i.kind} ${i.label ?? i.handle} of session ${i.sessionId}: ${what}`;

/** The tick's service (the auxiliary unit). */
export function pollServiceProperties(i: PollUnitInput): UnitProperty[] {
  return [
    ['Description', 's', describe(i, 'one tick')],
    ...sessionWorkProperties(i),
    ['RuntimeMaxUSec', 't', us(Math.max(MIN_TIMEOUT_S, i.timeoutS))],
    ['TimeoutStopUSec', 't', TICK_KILL_GRACE_US],
    ['CollectMode', 's', 'inactive-or-failed'],
  ];
}

/** The timer (the unit started). */
export function pollTimerProperties(i: PollUnitInput, cadence: Cadence): UnitProperty[] {
  const common: UnitProperty[] = [
    ['Description', 's', describe(i, cadence.kind === 'interval' ? `every ${cadence.intervalS} s` : 'backing off after failures')],
    ['AccuracyUSec', 't', TICK_ACCURACY_US],
    ['CollectMode', 's', 'inactive-or-failed'],
  ];
  if (cadence.kind === 'interval') {
    return [...common, ['TimersMonotonic', 'a(st)', [['OnActiveSec', us(cadence.firstS)], ['OnUnitInactiveSec', us(cadence.intervalS)]]]];
  }
  return [
    ...common,
    ['TimersMonotonic', 'a(st)', [['OnActiveSec', us(cadence.afterS)], ['OnUnitInactiveSec', us(cadence.afterS)]]],
    ['RandomizedDelayUSec', 't', us(cadence.jitterS)],
  ];
}
