/**
 * sbd's D-Bus values, typed as systemd types its own (pure): sizes and times as uint64 with
 * UINT64_MAX for "infinity" (an unlimited brake; no deadline, no heartbeat), shares as doubles,
 * absent text as "", an incident's extra figures as a{sv}. Encoded by sbd, decoded by sbctl into
 * the same StatusReport and Incident objects sbd holds, so `sbctl status --json` and
 * `sbctl watch --json` read the same whether sbd answers or sbctl reads systemd itself.
 */
import { Variant } from 'dbus-next';
import { UINT64_MAX } from '../systemd/values';
import type { Incident } from './incidents';

// The status part needs no dbus-next (sbctl status's fast path loads it alone): its own file.
export * from './bus-status';

/** Incident(type, unit, session, wall-clock µs, message, observe-only, figures). */
export const INCIDENT_SIGNATURE = 'ssstsba{sv}';

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
