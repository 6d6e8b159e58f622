/**
 * `sbctl monitor start|tail|poll|list|stop|inspect|recover|gc` (issue 13): ask sbd, which owns the session's
 * monitors, over its typed D-Bus interface (StartMonitor takes the request as a{sv}, never JSON
 * in a string). The program of a spawn is resolved on the caller's PATH here, so the unit runs
 * what the agent meant; its arguments are never printed back.
 */
import * as dbus from 'dbus-next';
import { BAD_REQUEST, type GcTuple, type MonitorStateTuple, type MonitorTuple, figuresToBus, gcFromBus, receiptFromBus } from '../daemon/bus-types';
import { type Receipt, formatReceipt } from '../monitor/receipt';
import { SERVICE_INTERFACE } from '../daemon/bus-name';
import { onPath } from '../util/on-path';
import { UsageError } from './errors';
import { table } from './table';
import { sessionOf } from './inbox';
import { callService, isStarting } from './status';

/** sbd is not running: exit code 3, as `sbctl watch`. */
export class NoService extends Error {
  readonly exitCode = 3;
  constructor(starting = false) {
    super(starting
      ? 'sbd is starting (it owns dev.sessionbrake.Manager1 but adopts the sessions and recovers the monitors first): try again in a moment'
      : 'sbd is not running (no dev.sessionbrake.Manager1 on the user bus): sbctl install --now');
    this.name = 'NoService';
  }
}

async function call(bus: dbus.MessageBus, member: string, signature: string, body: unknown[]): Promise<unknown[]> {
  try {
    return await callService(bus, SERVICE_INTERFACE, member, signature, body);
  } catch (err) {
    if (err instanceof dbus.DBusError && err.type === BAD_REQUEST) throw new UsageError(err.text ?? err.message);
    if (err instanceof dbus.DBusError && /ServiceUnknown|NameHasNoOwner/.test(err.type)) throw new NoService();
    if (isStarting(err)) throw new NoService(true);
    throw err;
  }
}

/** The request as sbd takes it; a spawn's program resolved on this caller's PATH. */
export function requestFor(spec: Record<string, unknown>, env: NodeJS.ProcessEnv, cwd: string): Record<string, unknown> {
  if (spec.type !== 'spawn') return spec;
  const argv = spec.argv as string[];
  const program = argv[0] ?? '';
  const resolved = onPath(program, env.PATH);
  if (resolved === undefined) throw new UsageError(`"${program}" is not an executable on your PATH: give its absolute path`);
  return { ...spec, argv: [resolved, ...argv.slice(1)], cwd: (spec.cwd as string | undefined) ?? cwd };
}

export async function monitorStart(bus: dbus.MessageBus, session: string | undefined, spec: Record<string, unknown>, json: boolean, env: NodeJS.ProcessEnv, say: (l: string) => void): Promise<number> {
  const who = sessionOf(session, env);
  const [[answer, id, handle, reason]] = (await call(bus, 'StartMonitor', 'sa{sv}', [who, figuresToBus(requestFor(spec, env, process.cwd()))])) as [[string, string, string, string]];
  if (json) say(JSON.stringify({ answer, id, handle, ...(reason ? { reason } : {}) }));
  else say(`${answer} ${handle}${reason ? `: ${reason}` : ''}`);
  return 0;
}

export interface MonitorRow {
  id: string;
  handle: string;
  label: string | null;
  type: string;
  lifecycle: string;
  reason: string | null;
  unit: string | null;
  session: string;
}

/** ListMonitors of a session ("" for every session's), as rows. */
export async function listMonitors(bus: dbus.MessageBus, who: string): Promise<MonitorRow[]> {
  const [rows] = (await call(bus, 'ListMonitors', 's', [who])) as [MonitorTuple[]];
  return rows.map(([id, handle, label, type, lifecycle, reason, unit, sess]) => ({ id, handle, label: label || null, type, lifecycle, reason: reason || null, unit: unit || null, session: sess }));
}

export async function monitorList(bus: dbus.MessageBus, session: string | undefined, all: boolean, json: boolean, env: NodeJS.ProcessEnv, say: (l: string) => void): Promise<number> {
  const monitors = await listMonitors(bus, all ? '' : sessionOf(session, env));
  if (json) say(JSON.stringify(monitors));
  else if (monitors.length === 0) say('no monitors');
  else say(table([['HANDLE', 'LABEL', 'TYPE', 'STATE', 'SESSION', 'WHY'], ...monitors.map((m) => [m.handle, m.label ?? '-', m.type, m.lifecycle, m.session, m.reason ?? ''])]));
  return 0;
}

export async function monitorStop(bus: dbus.MessageBus, session: string | undefined, handle: string, json: boolean, env: NodeJS.ProcessEnv, say: (l: string) => void): Promise<number> {
  const [lifecycle] = (await call(bus, 'StopMonitor', 'ss', [sessionOf(session, env), handle])) as [string];
  say(json ? JSON.stringify({ handle, lifecycle }) : `${handle}: ${lifecycle}`);
  return 0;
}

/** The lifecycles that wait for `recover approve` or `reject` (monitor/lifecycle.ts WAITING). */
const WAITING = new Set(['quarantined', 'awaiting-confirmation', 'suspended']);
const ENDED = new Set(['stopped', 'expired', 'gone']);

/** `recover`: the session's monitors that wait for a decision, and why. */
export async function monitorRecoverList(bus: dbus.MessageBus, session: string | undefined, json: boolean, env: NodeJS.ProcessEnv, say: (l: string) => void): Promise<number> {
  const waiting = (await listMonitors(bus, sessionOf(session, env))).filter((m) => WAITING.has(m.lifecycle));
  if (json) say(JSON.stringify(waiting));
  else if (waiting.length === 0) say('nothing waits');
  else say(table([['HANDLE', 'LABEL', 'TYPE', 'STATE', 'WHY'], ...waiting.map((m) => [m.handle, m.label ?? '-', m.type, m.lifecycle, m.reason ?? ''])]));
  return 0;
}

/** `recover approve|reject HANDLE`. */
export async function monitorRecover(bus: dbus.MessageBus, verb: 'approve' | 'reject', session: string | undefined, handle: string, json: boolean, env: NodeJS.ProcessEnv, say: (l: string) => void): Promise<number> {
  const [[h, value]] = (await call(bus, verb === 'approve' ? 'ApproveMonitor' : 'RejectMonitor', 'ss', [sessionOf(session, env), handle])) as [MonitorStateTuple];
  if (verb === 'approve') say(json ? JSON.stringify({ handle: h, lifecycle: value }) : `${h}: approved, ${value}`);
  else say(json ? JSON.stringify({ handle: h, lifecycle: 'rejected', archivedTo: value }) : `${h}: rejected, record archived to ${value}`);
  return 0;
}

/** `inspect HANDLE`: the full receipt. */
export async function monitorInspect(bus: dbus.MessageBus, session: string | undefined, handle: string, json: boolean, env: NodeJS.ProcessEnv, say: (l: string) => void): Promise<number> {
  const [v] = (await call(bus, 'InspectMonitor', 'ss', [sessionOf(session, env), handle])) as [Record<string, dbus.Variant>];
  const receipt = receiptFromBus<Receipt>(v);
  say(json ? JSON.stringify(receipt) : formatReceipt(receipt));
  return 0;
}

/** Exit code of `stop --all` without --confirm: it refuses, as a bad request (2). */
export const EXIT_NOT_CONFIRMED = 2;

/** `stop --all [--confirm]`: this session's monitors, and only with --confirm; else what it would stop. */
export async function monitorStopAll(bus: dbus.MessageBus, session: string | undefined, confirm: boolean, json: boolean, env: NodeJS.ProcessEnv, say: (l: string) => void, warn: (l: string) => void): Promise<number> {
  const who = sessionOf(session, env);
  if (!confirm) {
    const would = (await listMonitors(bus, who)).filter((m) => !ENDED.has(m.lifecycle));
    if (json) say(JSON.stringify({ session: who, confirmed: false, wouldStop: would.map((m) => ({ handle: m.handle, label: m.label, type: m.type, lifecycle: m.lifecycle })) }));
    else if (would.length > 0) say(table([['WOULD STOP', 'LABEL', 'TYPE', 'STATE'], ...would.map((m) => [m.handle, m.label ?? '-', m.type, m.lifecycle])]));
    warn(would.length === 0
      ? `sbctl monitor stop --all: session ${who} has no monitor running or waiting; nothing would be stopped`
      : `sbctl monitor stop --all: refused without --confirm; it would stop the ${would.length} monitor${would.length === 1 ? '' : 's'} of session ${who} above (no other session's)`);
    return EXIT_NOT_CONFIRMED;
  }
  const [rows] = (await call(bus, 'StopAllMonitors', 's', [who])) as [MonitorStateTuple[]];
  if (json) say(JSON.stringify({ session: who, confirmed: true, stopped: rows.map(([handle, lifecycle]) => ({ handle, lifecycle })) }));
  else say(rows.length === 0 ? `session ${who}: no monitor to stop` : rows.map(([h, l]) => `${h}: ${l}`).join('\n'));
  return 0;
}

/** `gc [--dry-run|--apply]`: corrupt and orphan records, and finished ones past their retention. */
export async function monitorGc(bus: dbus.MessageBus, apply: boolean, json: boolean, say: (l: string) => void): Promise<number> {
  const [rows] = (await call(bus, 'CollectMonitors', 'b', [apply])) as [GcTuple[]];
  const entries = rows.map(gcFromBus);
  if (json) say(JSON.stringify({ applied: apply, entries }));
  else if (entries.length === 0) say('nothing to collect');
  else {
    say(table([['KIND', 'WHAT', apply ? 'DONE' : 'WOULD', 'WHY'], ...entries.map((e) => [e.kind, e.what, e.kind === 'kept' ? 'keep' : apply ? 'archived' : 'archive', e.why])]));
    if (!apply) say('(a dry run: sbctl monitor gc --apply archives these; nothing is ever stopped or deleted)');
  }
  return 0;
}
