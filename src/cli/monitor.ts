/**
 * `sbctl monitor start|tail|poll|list|stop` (issue 13): ask sbd, which owns the session's
 * monitors, over its typed D-Bus interface (StartMonitor takes the request as a{sv}, never JSON
 * in a string). The program of a spawn is resolved on the caller's PATH here, so the unit runs
 * what the agent meant; its arguments are never printed back.
 */
import * as dbus from 'dbus-next';
import { BAD_REQUEST, type MonitorTuple } from '../daemon/bus-service';
import { figuresToBus } from '../daemon/bus-types';
import { SERVICE_INTERFACE } from '../daemon/bus-name';
import { onPath } from '../util/on-path';
import { UsageError } from './errors';
import { table } from './table';
import { sessionOf } from './inbox';
import { callService } from './status';

/** sbd is not running: exit code 3, as `sbctl watch`. */
export class NoService extends Error {
  readonly exitCode = 3;
  constructor() {
    super('sbd is not running (no dev.sessionbrake.Manager1 on the user bus): sbctl install --now');
    this.name = 'NoService';
  }
}

async function call(bus: dbus.MessageBus, member: string, signature: string, body: unknown[]): Promise<unknown[]> {
  try {
    return await callService(bus, SERVICE_INTERFACE, member, signature, body);
  } catch (err) {
    if (err instanceof dbus.DBusError && err.type === BAD_REQUEST) throw new UsageError(err.text ?? err.message);
    if (err instanceof dbus.DBusError && /ServiceUnknown|NameHasNoOwner/.test(err.type)) throw new NoService();
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

export async function monitorList(bus: dbus.MessageBus, session: string | undefined, all: boolean, json: boolean, env: NodeJS.ProcessEnv, say: (l: string) => void): Promise<number> {
  const who = all ? '' : sessionOf(session, env);
  const [rows] = (await call(bus, 'ListMonitors', 's', [who])) as [MonitorTuple[]];
  const monitors = rows.map(([id, handle, label, type, lifecycle, reason, unit, sess]) => ({ id, handle, label: label || null, type, lifecycle, reason: reason || null, unit: unit || null, session: sess }));
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
