/**
 * `sbctl monitor inspect` (issue 13): a monitor's full receipt, from its record and what systemd
 * says of its unit now (pure). Who runs it (sbd's bus name and start, the lease's epoch), its unit
 * and invocation, the main pid, the command hash (never the argv: it can carry tokens), when it
 * was created, started and ended, its exit, the signals sbd sent (none: a stop is systemd's
 * StopUnit with KillMode=control-group, and nothing else is signalled), ticks, failures,
 * truncations, the offset read up to, and its expiry.
 */
import type { UnitInfo } from '../systemd/types';
import type { MonitorRecord } from './store';

export interface Receipt {
  id: string;
  handle: string;
  label: string | null;
  type: string;
  session: string;
  sessionUnit: string;
  sessionInvocation: string;
  lifecycle: string;
  reason: string | null;
  owner: { busName: string; epochMs: number };
  commandHash: string;
  createdAtMs: number;
  /** When its main process last started (a spawn: systemd's ExecMainStartTimestamp). */
  startedAtMs: number | null;
  endedAtMs: number | null;
  unit: { name: string; invocationId: string | null; invocationIdNow: string | null; activeState: string; result: string | null; mainPid: number | null; nRestarts: number | null } | null;
  exit: { code: string; status: number } | null;
  /** Signals sbd sent to the monitor's processes: none (systemd's stop is not sbd's signal). */
  signalsSent: string[];
  ticks: number;
  consecutiveFailures: number;
  truncations: number;
  offset: number | null;
  expiresAt: string | null;
  /** Seconds left until expiresAt on the monotonic deadline (negative when past); null without one. */
  expiresInS: number | null;
  heartbeatMinutes: number | null;
}

/** The receipt; `unit` is systemd's view of the monitor's unit now (undefined when none or gone). */
export function receiptOf(r: MonitorRecord, handle: string, unit: UnitInfo | undefined, expiresInS: number | null): Receipt {
  return {
    id: r.id, handle, label: r.spec.label ?? null, type: r.spec.type,
    session: r.sessionId, sessionUnit: r.sessionUnit, sessionInvocation: r.sessionInvocation,
    lifecycle: r.lifecycle, reason: r.reason ?? null,
    owner: { busName: r.owner.busName, epochMs: r.owner.epoch },
    commandHash: r.sourceHash,
    createdAtMs: r.createdAtMs,
    startedAtMs: unit?.mainStartedAtMs ?? null,
    endedAtMs: r.endedAtMs ?? null,
    unit: r.unit
      ? {
        name: r.unit.name, invocationId: r.unit.invocationId ?? null, invocationIdNow: unit?.invocationId || null,
        activeState: unit?.activeState ?? 'gone', result: unit?.result ?? null,
        mainPid: unit?.mainPid ? unit.mainPid : null, nRestarts: unit?.nRestarts ?? null,
      }
      : null,
    exit: r.exit ?? null,
    signalsSent: [],
    ticks: r.ticks, consecutiveFailures: r.consecutiveFailures, truncations: r.truncations,
    offset: r.offset ?? null,
    expiresAt: r.spec.expiresAt ?? null, expiresInS,
    heartbeatMinutes: r.spec.heartbeatMinutes ?? null,
  };
}

const at = (ms: number | null): string => (ms === null ? '-' : new Date(ms).toISOString().replace('T', ' ').slice(0, 19));

/** The receipt for people: one "key: value" per line. */
export function formatReceipt(x: Receipt): string {
  const rows: Array<[string, string]> = [
    ['monitor', `${x.handle} (${x.id})${x.label ? ` "${x.label}"` : ''}`],
    ['type', x.type],
    ['state', `${x.lifecycle}${x.reason ? `: ${x.reason}` : ''}`],
    ['session', `${x.session} (${x.sessionUnit}, invocation ${x.sessionInvocation})`],
    ['owner', `${x.owner.busName}, sbd started ${at(x.owner.epochMs)} (epoch ${x.owner.epochMs})`],
    ['command hash', x.commandHash],
    ['created', at(x.createdAtMs)],
    ['started', at(x.startedAtMs)],
    ['ended', at(x.endedAtMs)],
    ['unit', x.unit ? `${x.unit.name} ${x.unit.activeState}${x.unit.result ? ` (${x.unit.result})` : ''}, invocation ${x.unit.invocationId ?? '-'}${x.unit.invocationIdNow && x.unit.invocationIdNow !== x.unit.invocationId ? ` (now ${x.unit.invocationIdNow})` : ''}` : '-'],
    ['main pid', x.unit?.mainPid ? String(x.unit.mainPid) : '-'],
    ['restarts', x.unit?.nRestarts !== null && x.unit?.nRestarts !== undefined ? String(x.unit.nRestarts) : '-'],
    ['exit', x.exit ? `${x.exit.code} ${x.exit.status}` : '-'],
    ['signals sent', x.signalsSent.length ? x.signalsSent.join(', ') : "none (a stop is systemd's: StopUnit, KillMode=control-group)"],
    ['ticks', String(x.ticks)],
    ['failures', `${x.consecutiveFailures} in a row`],
    ['truncations', String(x.truncations)],
    ['offset', x.offset === null ? '-' : `${x.offset} bytes`],
    ['expires', x.expiresAt === null ? 'never' : `${x.expiresAt}${x.expiresInS !== null ? ` (${x.expiresInS >= 0 ? `in ${Math.round(x.expiresInS)} s` : `${Math.round(-x.expiresInS)} s ago`})` : ''}`],
    ['heartbeat', x.heartbeatMinutes === null ? 'none' : `every ${x.heartbeatMinutes} min`],
  ];
  const width = Math.max(...rows.map(([k]) => k.length));
  return rows.map(([k, v]) => `${`${k}:`.padEnd(width + 2)}${v}`).join('\n');
}
