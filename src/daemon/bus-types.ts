/**
 * sbd's D-Bus values, typed as systemd types its own (pure): sizes and times as uint64 with
 * UINT64_MAX for "infinity" (an unlimited brake; no deadline, no heartbeat), shares as doubles,
 * absent text as "", an incident's extra figures as a{sv}. Encoded by sbd, decoded by sbctl into
 * the same StatusReport and Incident objects sbd holds, so `sbctl status --json` and
 * `sbctl watch --json` read the same whether sbd answers or sbctl reads systemd itself.
 */
import { Variant } from 'dbus-next';
import type { ServiceHealth, SessionRow, SliceRow } from '../sessions/status';
import { UINT64_MAX, limitFromBus, limitToBus } from '../systemd/values';
import type { Incident } from './incidents';

/** One session (ListSessions): name, unit, state, deadline µs left, last action, feed ("" when
 * none), memory.current, memory.high, memory.max, memory.swap.max, anon share, full avg10 share
 * (-1 without PSI: a share is never negative, and dbus-next sends no NaN), processes, biggest (comm, pid, RSS; pid 0 when none), heartbeat age µs. */
export const SESSION_SIGNATURE = '(ssstssttttddu(sut)t)';
/** One slice (ListSlices): name, state, cause, current, brake, ceiling, machine's available,
 * members (path, current, growth, fair share), culprit (path, rule, why; "" when none),
 * deadline µs left, last action, feed ("" when not said). */
export const SLICE_SIGNATURE = '(ssstttta(stxd)(sss)tss)';
/** Incident(type, unit, session, wall-clock µs, message, observe-only, figures). */
export const INCIDENT_SIGNATURE = 'ssstsba{sv}';

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
    sampleAgeS: null, // the typed row has no place for it
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
  /** Absent from an sbd before issue 15. */
  Adopting?: number[] | undefined;
}

export function healthFromBus(p: HealthProps): ServiceHealth {
  const adopting = adoptingFromBus(p.Adopting);
  return { running: true, pid: p.Pid, version: p.Version, uptimeS: usecFromBus(p.UptimeUSec), feed: p.Feed as ServiceHealth['feed'], observeOnly: p.ObserveOnly, slices: p.Slices, ...(adopting ? { adopting } : {}) };
}

/** ServiceHealth.adopting as the Adopting property: [read, listed] (listed -1 while listing), [] when done. */
export function adoptingToBus(a: ServiceHealth['adopting']): number[] {
  return a === undefined ? [] : [a.adopted, a.listed ?? -1];
}

export function adoptingFromBus(v: number[] | undefined): ServiceHealth['adopting'] {
  if (v === undefined || v.length !== 2) return undefined;
  const [adopted, listed] = v as [number, number];
  return { adopted, listed: listed < 0 ? null : listed };
}

/** A figure as a variant: text, flag, whole number (int64), other number (double; an unlimited
 * size as uint64 UINT64_MAX, since dbus-next sends no infinite double), list, record. null,
 * undefined and NaN have no D-Bus form: such a figure is left out. */
function figureToBus(v: unknown): Variant | undefined {
  if (typeof v === 'string') return new Variant('s', v);
  if (typeof v === 'boolean') return new Variant('b', v);
  if (typeof v === 'bigint') return new Variant('x', v);
  if (typeof v === 'number') {
    if (v === Infinity) return new Variant('t', UINT64_MAX);
    if (Number.isSafeInteger(v)) return new Variant('x', BigInt(v));
    return Number.isFinite(v) ? new Variant('d', v) : undefined;
  }
  if (Array.isArray(v)) return new Variant('av', v.map(figureToBus).filter((x): x is Variant => x !== undefined));
  if (v !== null && typeof v === 'object') return new Variant('a{sv}', figuresToBus(v as Record<string, unknown>));
  return undefined;
}

export function figuresToBus(o: Record<string, unknown>): Record<string, Variant> {
  const out: Record<string, Variant> = {};
  for (const [k, v] of Object.entries(o)) {
    const variant = figureToBus(v);
    if (variant !== undefined) out[k] = variant;
  }
  return out;
}

function figureFromBus(v: Variant): unknown {
  if (v.signature === 't' && v.value === UINT64_MAX) return Infinity;
  if (typeof v.value === 'bigint') return Number(v.value);
  if (v.signature === 'av') return (v.value as Variant[]).map(figureFromBus);
  if (v.signature === 'a{sv}') return figuresFromBus(v.value as Record<string, Variant>);
  return v.value;
}

export function figuresFromBus(o: Record<string, Variant>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(o)) out[k] = figureFromBus(v);
  return out;
}

export type IncidentArgs = [string, string, string, bigint, string, boolean, Record<string, Variant>];

const FIXED = new Set(['type', 'unit', 'session', 'atMs', 'message', 'observeOnly']);

export function incidentToBus(i: Incident): IncidentArgs {
  const figures = Object.fromEntries(Object.entries(i).filter(([k]) => !FIXED.has(k)));
  return [i.type, i.unit, i.session, BigInt(Math.round(i.atMs * 1000)), i.message, i.observeOnly, figuresToBus(figures)];
}

export function incidentFromBus(args: IncidentArgs): Incident {
  const [type, unit, session, atUsec, message, observeOnly, figures] = args;
  return { type: type as Incident['type'], unit, session, atMs: Number(atUsec) / 1000, message, observeOnly, ...figuresFromBus(figures) };
}

/** The error name sbctl maps to exit code 2: the request cannot be met as asked. */
export const BAD_REQUEST = 'dev.sessionbrake.Error.BadRequest';

/** One monitor in ListMonitors: id, handle, label, type, lifecycle, reason, unit, session. */
export const MONITOR_SIGNATURE = '(ssssssss)';
export type MonitorTuple = [string, string, string, string, string, string, string, string];

/** StopAllMonitors and the recover verbs: (handle, lifecycle now). */
export const MONITOR_STATE_SIGNATURE = '(ss)';
export type MonitorStateTuple = [string, string];

/** One entry of CollectMonitors (gc): kind (corrupt, orphan, finished, kept), what (handle or
 * file name), id ("" for a corrupt file), why, archived to ("" in a dry run or when kept). */
export const GC_SIGNATURE = '(sssss)';
export type GcTuple = [string, string, string, string, string];

export interface GcRow {
  kind: string;
  what: string;
  id: string | null;
  why: string;
  archivedTo: string | null;
}

export function gcToBus(e: { kind: string; what: string; id?: string | undefined; why: string; archivedTo?: string | undefined }): GcTuple {
  return [e.kind, e.what, e.id ?? '', e.why, e.archivedTo ?? ''];
}

export function gcFromBus([kind, what, id, why, archivedTo]: GcTuple): GcRow {
  return { kind, what, id: id === '' ? null : id, why, archivedTo: archivedTo === '' ? null : archivedTo };
}

/** InspectMonitor's receipt as a{sv}: each key of monitor/receipt.ts Receipt, nested records as
 * a{sv}; a null (none) has no D-Bus form and is left out, and put back as null by receiptFromBus. */
export function receiptToBus(r: object): Record<string, Variant> {
  return figuresToBus(r as Record<string, unknown>);
}

const RECEIPT_NULLABLE = ['label', 'reason', 'startedAtMs', 'endedAtMs', 'unit', 'exit', 'offset', 'expiresAt', 'expiresInS', 'heartbeatMinutes'] as const;
const UNIT_NULLABLE = ['invocationId', 'invocationIdNow', 'result', 'mainPid', 'nRestarts'] as const;

export function receiptFromBus<T>(v: Record<string, Variant>): T {
  const o = figuresFromBus(v);
  for (const k of RECEIPT_NULLABLE) o[k] ??= null;
  const unit = o.unit as Record<string, unknown> | null;
  if (unit) for (const k of UNIT_NULLABLE) unit[k] ??= null;
  o.signalsSent ??= [];
  return o as T;
}
