/**
 * sbd's whole status as one JSON text (GetStatus()), as `sbctl status --json` prints it: an
 * unlimited size as "infinity". One string, because dbus-next spends about 5 µs on each value it
 * marshals: 500 sessions as typed structs took 45 ms a call on the host (~0.5 s under the lab's
 * emulation), as text 0.3 ms (measured 2026-11-30, bench/status-cost.js's notes). The typed
 * properties and ListSessions()/ListSlices() stay for tools that want types.
 */
import type { ServiceHealth, StatusReport } from '../sessions/status';

/** JSON.stringify's replacer for sbctl's output: Infinity (an unlimited size) as "infinity". */
export function jsonValue(_key: string, v: unknown): unknown {
  return v === Infinity ? 'infinity' : v;
}

export function statusToJson(report: StatusReport): string {
  return JSON.stringify(report, jsonValue);
}

/**
 * The report as sbd wrote it, sizes still "infinity" (what `sbctl status --json` prints again):
 * parsed without a reviver, which made JSON.parse 7 times slower (26 ms against 3.5 ms for 500
 * sessions on the host, about 0.3 s under the lab's emulation).
 */
export interface EncodedStatusReport {
  service: ServiceHealth;
  sessions: Array<{ name: string; unit: string }>;
  slices?: unknown[];
}

function checked<T>(report: T): T {
  const r = report as { service?: unknown; sessions?: unknown } | null;
  if (typeof r !== 'object' || r === null || typeof r.service !== 'object' || !Array.isArray(r.sessions)) {
    throw new Error('GetStatus answered something that is not a status report');
  }
  return report;
}

export function encodedStatusFromJson(text: string): EncodedStatusReport {
  return checked(JSON.parse(text) as EncodedStatusReport);
}

/** The report back from its text: "infinity" is a number again where the key names a size. */
export function statusFromJson(text: string): StatusReport {
  return checked(JSON.parse(text, (key, v) => (v === 'infinity' && /Bytes$/.test(key) ? Infinity : v)) as StatusReport);
}
