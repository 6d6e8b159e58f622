/**
 * A spawn monitor is a transient service of the session's slice (issue 13, design.md §12): the
 * properties StartTransientUnit is given, built here as plain data (pure; the D-Bus layer wraps
 * them in variants). Each systemd property does one job, so sbd re-implements none of them:
 *  - Slice, Environment SESSIONBRAKE_SESSION: the service belongs to the session (sbd watches and
 *    brakes it like the session, and reaps it when the session ends);
 *  - MemoryHigh: a brake of its own;
 *  - KillMode=control-group: a stop ends its whole tree, nothing outside it;
 *  - RuntimeMaxUSec: expiresAt's backstop, EXPIRY_BACKSTOP_S after sbd's own timer (monitor/timers.ts)
 *    would have stopped it, for when sbd is not running; RestartPreventExitStatus=SIGTERM so that
 *    its SIGTERM is not taken for a crash that Restart=on-failure replays (systemd 252 restarts a
 *    unit whose Result is timeout);
 *  - Restart=on-failure with StartLimitBurst / StartLimitIntervalUSec: the crash-loop fuse (the
 *    unit ends failed with result start-limit-hit, which sbd quarantines);
 *  - StandardOutputFileToAppend / StandardErrorFileToAppend: output to a file the addon's inotify
 *    watch tails (no pipe held by sbd, so sbd may restart under it);
 *  - Type=exec: the start job fails when the program cannot be executed, not later;
 *  - ExecMainCode / ExecMainStatus (read back): the exit receipt.
 */
import type { TransientProperty } from '../systemd/types';

/** A property as StartTransientUnit takes it (systemd/types TransientProperty). */
export type UnitProperty = TransientProperty;

/** Starts of a crashing spawn allowed within the interval before systemd gives up (its own default is 5 in 10 s; a monitor's job is slower). */
export const CRASH_LOOP_BURST = 3;
export const CRASH_LOOP_INTERVAL_US = 60_000_000n;
/** Between a crash and the restart: 2 s, so a crash loop takes seconds, not a burst of forks. */
const RESTART_DELAY_US = 2_000_000n;
/** systemd's RuntimeMaxUSec comes this long after expiresAt: sbd's own timer stops the unit first
 * (a stop job: never restarted, one notice); systemd's ends it when sbd is not there to. 30 s: more
 * than sbd's restart takes under load (34-restart measured up to 44 s ready; the timer of a
 * restarted sbd fires at once for what expired meanwhile), and short beside any expiry people give. */
export const EXPIRY_BACKSTOP_S = 30;
/** SIGTERM (15): a process ended by it was asked to stop, and is not restarted as a crash. */
const SIGTERM = 15;

export interface SpawnUnitInput {
  monitorId: string;
  handle: string;
  label?: string | undefined;
  sessionId: string;
  slice: string;
  argv: readonly string[];
  /** The program resolved to an absolute path (ExecStart wants one). */
  programPath: string;
  cwd?: string | undefined;
  outputFile: string;
  memoryHighBytes: number;
  /** Seconds until expiresAt; undefined for none. */
  runtimeMaxS?: number | undefined;
}

/** The unit's name: one per monitor, and recognisably sessionbrake's. */
export const spawnUnitName = (monitorId: string): string => `sb-monitor-${monitorId}.service`;

/** The monitor a unit belongs to, from its name (sb-monitor-ID.service, a poll's sb-monitor-ID.timer); undefined for others. */
export function monitorIdOfUnit(unit: string): string | undefined {
  return /^sb-monitor-([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})\.(?:service|timer)$/.exec(unit)?.[1];
}

/** What every unit running a monitor's work carries: a spawn's service, a poll's tick. */
export interface SessionWork {
  monitorId: string;
  sessionId: string;
  slice: string;
  /** The program resolved to an absolute path (ExecStart wants one). */
  programPath: string;
  argv: readonly string[];
  outputFile: string;
  memoryHighBytes: number;
}

/**
 * The properties of the session's work, shared by a spawn and a poll's tick: the program, run
 * directly (Type=exec fails the start when it cannot be executed); the session's slice, marker
 * and brake; its whole tree stopped together; its output appended to the file sbd follows.
 */
export function sessionWorkProperties(i: SessionWork): UnitProperty[] {
  return [
    ['Type', 's', 'exec'],
    ['ExecStart', 'a(sasb)', [[i.programPath, [...i.argv], false]]],
    ['Slice', 's', i.slice],
    ['Environment', 'as', [`SESSIONBRAKE_SESSION=${i.sessionId}`, `SESSIONBRAKE_MONITOR=${i.monitorId}`]],
    ['KillMode', 's', 'control-group'],
    ['MemoryHigh', 't', BigInt(i.memoryHighBytes)],
    ['StandardOutputFileToAppend', 's', i.outputFile],
    ['StandardErrorFileToAppend', 's', i.outputFile],
  ];
}

export function spawnUnitProperties(i: SpawnUnitInput): UnitProperty[] {
  const props: UnitProperty[] = [
    // names, never arguments: they can carry tokens, and Description shows in every listing
    ['Description', 's', `sessionbrake monitor ${i.label ?? i.handle} of session ${i.sessionId}`],
    ...sessionWorkProperties(i),
    ['Restart', 's', 'on-failure'],
    ['RestartUSec', 't', RESTART_DELAY_US],
    ['RestartPreventExitStatus', '(aiai)', [[], [SIGTERM]]],
    ['StartLimitBurst', 'u', CRASH_LOOP_BURST],
    ['StartLimitIntervalUSec', 't', CRASH_LOOP_INTERVAL_US],
  ];
  if (i.cwd !== undefined) props.push(['WorkingDirectory', 's', i.cwd]);
  if (i.runtimeMaxS !== undefined) props.push(['RuntimeMaxUSec', 't', BigInt(Math.max(1, Math.ceil(i.runtimeMaxS)) * 1_000_000)]);
  return props;
}
