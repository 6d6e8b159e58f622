/**
 * `sbctl status [SESSION] [--json]`: sbd's own report over D-Bus; when sbd is not running, the
 * sessions read straight from systemd and the cgroup files. Exit codes as `systemctl status`:
 * 0 sbd running, 3 not running, 4 no such session.
 */
import * as dbus from 'dbus-next';
import type { Config } from '../config/schema';
import { SERVICE_INTERFACE, SERVICE_NAME, SERVICE_PATH } from '../daemon/bus-name';
import { type SessionRow, type StatusReport, sessionRow } from '../sessions/status';
import { cgroupDir } from '../cgroup/read';
import { sessionId } from '../systemd/names';
import type { DbusUserManager } from '../systemd/user-manager';
import { VERSION } from '../version';
import { formatStatus } from './status-format';

export const EXIT_NOT_RUNNING = 3;
export const EXIT_NO_SUCH_SESSION = 4;

/** sbd's report, or undefined when nobody owns its name on this bus. */
export async function queryService(bus: dbus.MessageBus): Promise<StatusReport | undefined> {
  try {
    const reply = await bus.call(new dbus.Message({ destination: SERVICE_NAME, path: SERVICE_PATH, interface: SERVICE_INTERFACE, member: 'Status', signature: '', body: [] }));
    return JSON.parse(String(reply?.body[0])) as StatusReport;
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
  process.stdout.write(json ? `${JSON.stringify(report, (_k, v: unknown) => (v === Infinity ? 'infinity' : v), 2)}\n` : `${formatStatus(report)}\n`);
  return report.service.running ? 0 : EXIT_NOT_RUNNING;
}
