/**
 * sbd's status on the bus, typed as systemd types its own values (pure, and free of dbus-next so
 * that `sbctl status` can decode it without loading that library): sizes and times as uint64 with
 * UINT64_MAX for "infinity" (an unlimited brake; no deadline, no heartbeat), shares as doubles,
 * absent text as "". ListSessions, ListSlices, the health properties, and GetStatus: all of it in
 * one call.
 */
import type { ServiceHealth, SessionRow, SliceRow, StatusReport } from '../sessions/status';
import { UINT64_MAX, limitFromBus, limitToBus } from '../systemd/values';

/** One session (ListSessions): name, unit, state, deadline µs left, last action, feed ("" when
 * none), memory.current, memory.high, memory.max, memory.swap.max, anon share, full avg10 share
 * (-1 without PSI: a share is never negative, and dbus-next sends no NaN), processes, biggest (comm, pid, RSS; pid 0 when none), heartbeat age µs. */
export const SESSION_SIGNATURE = '(ssstssttttddu(sut)t)';
/** One slice (ListSlices): name, state, cause, current, brake, ceiling, machine's available,
 * members (path, current, growth, fair share), culprit (path, rule, why; "" when none),
 * deadline µs left, last action, feed ("" when not said). */
export const SLICE_SIGNATURE = '(ssstttta(stxd)(sss)tss)';

type Seconds = number | null;
/** A share that was not measured (no PSI). */
const NO_SHARE = -1;

/** Seconds as µs; null (none) as UINT64_MAX, as systemd writes USEC_INFINITY. */
export function usecToBus(s: Seconds): bigint {
  return s === null ? UINT64_MAX : BigInt(Math.round(s * 1e6));
}
function usecFromBus(v: bigint): Seconds {
  return v === UINT64_MAX ? null : Number(v) / 1e6;
}

export type SessionTuple = [string, string, string, bigint, string, string, bigint, bigint, bigint, bigint, number, number, number, [string, number, bigint], bigint];

export function sessionToBus(r: SessionRow): SessionTuple {
  return [
    r.name, r.unit, r.state, usecToBus(r.deadlineS), r.lastAction ?? '', r.feed ?? '',
    limitToBus(r.currentBytes), limitToBus(r.highBytes), limitToBus(r.maxBytes), limitToBus(r.swapMaxBytes),
    r.anonShare, r.pressureFullAvg10 ?? NO_SHARE, r.processes,
    r.biggest ? [r.biggest.name, r.biggest.pid, limitToBus(r.biggest.rssBytes)] : ['', 0, 0n],
    usecToBus(r.heartbeatAgeS),
  ];
}

/** The row as sbd holds it, keys in the order `sessionRow` gives them. */
export function sessionFromBus(t: SessionTuple): SessionRow {
  const [name, unit, state, deadline, lastAction, feed, current, high, max, swapMax, anonShare, pressure, processes, [bName, bPid, bRss], heartbeat] = t;
  return {
    name, unit, state, deadlineS: usecFromBus(deadline), lastAction: lastAction === '' ? null : lastAction, feed: feed === '' ? null : feed,
    currentBytes: limitFromBus(current), highBytes: limitFromBus(high), maxBytes: limitFromBus(max), swapMaxBytes: limitFromBus(swapMax),
    anonShare, pressureFullAvg10: pressure < 0 ? null : pressure, processes,
    biggest: bPid === 0 ? null : { name: bName, pid: bPid, rssBytes: limitFromBus(bRss) },
    heartbeatAgeS: usecFromBus(heartbeat),
  };
}

export type SliceTuple = [string, string, string, bigint, bigint, bigint, bigint, Array<[string, bigint, bigint, number]>, [string, string, string], bigint, string, string];

export function sliceToBus(s: SliceRow): SliceTuple {
  return [
    s.slice, s.state, s.cause ?? '',
    limitToBus(s.currentBytes), limitToBus(s.highBytes), limitToBus(s.maxBytes), limitToBus(s.memAvailableBytes),
    s.members.map((m) => [m.path, limitToBus(m.currentBytes), BigInt(m.growthBytes), m.fairShareBytes]),
    s.culprit ? [s.culprit.path, s.culprit.rule, s.culprit.why] : ['', '', ''],
    usecToBus(s.deadlineS), s.lastAction ?? '', s.feed ?? '',
  ];
}

/** The slice row as sbd holds it, keys in the order `sliceRow` gives them. */
export function sliceFromBus(t: SliceTuple): SliceRow {
  const [slice, state, cause, current, high, max, available, members, [cPath, cRule, cWhy], deadline, lastAction, feed] = t;
  return {
    slice, state, cause: cause === '' ? null : cause,
    currentBytes: limitFromBus(current), highBytes: limitFromBus(high), maxBytes: limitFromBus(max), memAvailableBytes: limitFromBus(available),
    members: members.map(([path, c, growth, fair]) => ({ path, currentBytes: limitFromBus(c), growthBytes: Number(growth), fairShareBytes: fair })),
    culprit: cPath === '' ? null : { path: cPath, rule: cRule, why: cWhy },
    deadlineS: usecFromBus(deadline),
    lastAction: lastAction === '' ? null : lastAction,
    ...(feed === '' ? {} : { feed }),
  };
}

/** The Manager1 properties sbctl status reads (GetAll), by name, as dbus-next hands them. */
export interface HealthProps {
  Version: string;
  Pid: number;
  UptimeUSec: bigint;
  Feed: string;
  ObserveOnly: boolean;
  Slices: string[];
}

export function healthFromBus(p: HealthProps): ServiceHealth {
  return { running: true, pid: p.Pid, version: p.Version, uptimeS: usecFromBus(p.UptimeUSec), feed: p.Feed as ServiceHealth['feed'], observeOnly: p.ObserveOnly, slices: p.Slices };
}

/** GetStatus()'s health: version, pid, uptime µs, feed, observe-only, slices, arbitrates slices. */
export const HEALTH_SIGNATURE = '(sutsbasb)';
/** GetStatus() -> (health, sessions, slices): everything `sbctl status` shows, in one call. */
export const STATUS_SIGNATURE = `${HEALTH_SIGNATURE}a${SESSION_SIGNATURE}a${SLICE_SIGNATURE}`;
export type HealthTuple = [string, number, bigint, string, boolean, string[], boolean];
export type StatusArgs = [HealthTuple, SessionTuple[], SliceTuple[]];

export function statusToBus(health: ServiceHealth, sessions: SessionRow[], slices: SliceRow[] | undefined): StatusArgs {
  return [
    [health.version, health.pid ?? 0, usecToBus(health.uptimeS), health.feed, health.observeOnly, health.slices, slices !== undefined],
    sessions.map(sessionToBus),
    (slices ?? []).map(sliceToBus),
  ];
}

/** The report as sbctl prints it, from GetStatus()'s answer: the same object as from the properties and lists. */
export function statusFromBus([h, sessions, slices]: StatusArgs): StatusReport {
  const [Version, Pid, UptimeUSec, Feed, ObserveOnly, Slices, arbitrates] = h;
  const report: StatusReport = { service: healthFromBus({ Version, Pid, UptimeUSec, Feed, ObserveOnly, Slices }), sessions: sessions.map(sessionFromBus) };
  if (arbitrates) report.slices = slices.map(sliceFromBus);
  return report;
}
