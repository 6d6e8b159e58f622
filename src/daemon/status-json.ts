/**
 * sbd's whole status as one JSON text (GetStatus()), as `sbctl status --json` prints it: an
 * unlimited size as "infinity". One string, because dbus-next spends about 5 µs on each value it
 * marshals: 500 sessions as typed structs took 45 ms a call on the host (~0.5 s under the lab's
 * emulation), as text 0.3 ms (measured 2026-11-30, bench/status-cost.js's notes). The typed
 * properties and ListSessions()/ListSlices() stay for tools that want types.
 */
import type { StatusReport } from '../sessions/status';

/** JSON.stringify's replacer for sbctl's output: Infinity (an unlimited size) as "infinity". */
export function jsonValue(_key: string, v: unknown): unknown {
  return v === Infinity ? 'infinity' : v;
}

export function statusToJson(report: StatusReport): string {
  return JSON.stringify(report, jsonValue);
}

/** The report back from its text: "infinity" is a number again where the key names a size. */
export function statusFromJson(text: string): StatusReport {
  const report = JSON.parse(text, (key, v) => (v === 'infinity' && /Bytes$/.test(key) ? Infinity : v)) as StatusReport;
  if (typeof report !== 'object' || report === null || typeof report.service !== 'object' || !Array.isArray(report.sessions)) {
    throw new Error('GetStatus answered something that is not a status report');
  }
  return report;
}
