/**
 * `sbctl status [SESSION] [--json]`: sbd's own report over D-Bus; when sbd is not running, the
 * sessions read straight from systemd and the cgroup files. Exit codes as `systemctl status`:
 * 0 sbd running, 3 not running, 4 no such session.
 */
import * as dbus from 'dbus-next';
import type { Config } from '../config/schema';
import { SERVICE_INTERFACE, SERVICE_NAME, SERVICE_PATH } from '../daemon/bus-name';
import { type HealthProps, type SessionTuple, type SliceTuple, healthFromBus, sessionFromBus, sliceFromBus } from '../daemon/bus-types';
import { type SessionRow, type StatusReport, sessionRow } from '../sessions/status';
import { cgroupDir } from '../cgroup/read';
import { sessionId } from '../systemd/names';
import type { DbusUserManager } from '../systemd/user-manager';
import { VERSION } from '../version';
import { formatStatus } from './status-format';

export const EXIT_NOT_RUNNING = 3;
export const EXIT_NO_SUCH_SESSION = 4;

/** One call to sbd's interface; the reply's arguments. */
export async function callService(bus: dbus.MessageBus, iface: string, member: string, signature: string, body: unknown[]): Promise<unknown[]> {
  const reply = await bus.call(new dbus.Message({ destination: SERVICE_NAME, path: SERVICE_PATH, interface: iface, member, signature, body }));
  return (reply?.body ?? []) as unknown[];
}

/** sbd's report (its typed properties and lists), or undefined when nobody owns its name on this bus. */
export async function queryService(bus: dbus.MessageBus): Promise<StatusReport | undefined> {
  try {
    const [props] = (await callService(bus, 'org.freedesktop.DBus.Properties', 'GetAll', 's', [SERVICE_INTERFACE])) as [Record<string, dbus.Variant>];
    const value = <K extends keyof HealthProps>(k: K): HealthProps[K] => props[k]?.value as HealthProps[K];
    const service = healthFromBus({ Version: value('Version'), Pid: value('Pid'), UptimeUSec: value('UptimeUSec'), Feed: value('Feed'), ObserveOnly: value('ObserveOnly'), Slices: value('Slices') });
    const [sessions] = (await callService(bus, SERVICE_INTERFACE, 'ListSessions', '', [])) as [SessionTuple[]];
    const report: StatusReport = { service, sessions: sessions.map(sessionFromBus) };
    if (props.ArbitratesSlices?.value === true) {
      const [slices] = (await callService(bus, SERVICE_INTERFACE, 'ListSlices', '', [])) as [SliceTuple[]];
      report.slices = slices.map(sliceFromBus);
    }
    return report;
  } catch (err) {
    if (err instanceof dbus.DBusError && /ServiceUnknown|NameHasNoOwner/.test(err.type)) return undefined;
    throw err;
  }
}

/** The same report without sbd: from systemd's units and their cgroup files. */
export async function reportWithoutService(manager: DbusUserManager, config: Config): Promise<StatusReport> {
  const now = Date.now();
  const units = await manager.listSliceUnits(config.slices);
  const rows = units
    .map((u) => sessionRow({ unit: u.unit, id: sessionId(u.unit), cgroupDir: cgroupDir(u.controlGroup), heartbeat: undefined }, 'unwatched', null, null, now))
    .filter((r): r is SessionRow => r !== undefined)
    .sort((a, b) => a.unit.localeCompare(b.unit));
  return { service: { running: false, pid: null, version: VERSION, uptimeS: null, feed: 'none', observeOnly: config.observeOnly, slices: config.slices }, sessions: rows };
}

/** The report as sbctl prints it: text for people, or JSON with an unlimited size as "infinity"
 * (as systemd and sbd's config write it), whether sbd answered or sbctl read systemd itself. */
export function renderStatus(report: StatusReport, json: boolean): string {
  return json ? JSON.stringify(report, jsonValue, 2) : formatStatus(report);
}

/** JSON.stringify's replacer for sbctl's output: Infinity (an unlimited size) as "infinity". */
export function jsonValue(_key: string, v: unknown): unknown {
  return v === Infinity ? 'infinity' : v;
}

export async function status(manager: DbusUserManager, bus: dbus.MessageBus, config: Config, session: string | undefined, json: boolean): Promise<number> {
  let report = (await queryService(bus)) ?? (await reportWithoutService(manager, config));
  if (session !== undefined) {
    const match = report.sessions.filter((s) => s.name === session || s.unit === session);
    if (match.length === 0) {
      process.stderr.write(`sbctl status: no session "${session}" in ${config.slices.join(', ')} (sbctl status lists them)\n`);
      return EXIT_NO_SUCH_SESSION;
    }
    report = { ...report, sessions: match };
  }
  process.stdout.write(`${renderStatus(report, json)}\n`);
  return report.service.running ? 0 : EXIT_NOT_RUNNING;
}
