/**
 * `sbctl status [SESSION] [--json]`: sbd's own report over D-Bus; when sbd is not running, the
 * sessions read straight from systemd and the cgroup files. Exit codes as `systemctl status`:
 * 0 sbd running, 3 not running, 4 no such session.
 */
import * as dbus from 'dbus-next';
import { SERVICE_INTERFACE, SERVICE_NAME, SERVICE_PATH } from '../daemon/bus-name';
import { type HealthProps, type SessionTuple, type SliceTuple, healthFromBus, sessionFromBus, sliceFromBus } from '../daemon/bus-types';
import type { StatusReport } from '../sessions/status';
import { statusFromJson } from '../daemon/status-json';
import { printReport } from './status-render';

export { EXIT_NOT_RUNNING, EXIT_NO_SUCH_SESSION, jsonValue, renderStatus } from './status-render';


/**
 * sbd owns its name but answers nothing yet: it takes the name first (the lease on what it owns)
 * and exports its interface once it has adopted the sessions and recovered the monitors.
 */
export const isStarting = (err: unknown): boolean =>
  err instanceof dbus.DBusError &&
  (/UnknownMethod|UnknownObject|UnknownInterface/.test(err.type) || (/InvalidArgs/.test(err.type) && /Path not exported/.test(err.text ?? err.message))); // dbus-next's words for GetAll on a path not yet exported

/** One call to sbd's interface; the reply's arguments. */
export async function callService(bus: dbus.MessageBus, iface: string, member: string, signature: string, body: unknown[]): Promise<unknown[]> {
  const reply = await bus.call(new dbus.Message({ destination: SERVICE_NAME, path: SERVICE_PATH, interface: iface, member, signature, body }));
  return (reply?.body ?? []) as unknown[];
}

/** sbd's report by its typed properties and lists (an sbd older than GetStatus): two or three calls. */
async function queryTyped(bus: dbus.MessageBus): Promise<StatusReport> {
  const [props] = (await callService(bus, 'org.freedesktop.DBus.Properties', 'GetAll', 's', [SERVICE_INTERFACE])) as [Record<string, dbus.Variant>];
  const value = <K extends keyof HealthProps>(k: K): HealthProps[K] => props[k]?.value as HealthProps[K];
  const service = healthFromBus({ Version: value('Version'), Pid: value('Pid'), UptimeUSec: value('UptimeUSec'), Feed: value('Feed'), ObserveOnly: value('ObserveOnly'), Slices: value('Slices'), Adopting: value('Adopting') });
  const [sessions] = (await callService(bus, SERVICE_INTERFACE, 'ListSessions', '', [])) as [SessionTuple[]];
  const report: StatusReport = { service, sessions: sessions.map(sessionFromBus) };
  if (props.ArbitratesSlices?.value === true) {
    const [slices] = (await callService(bus, SERVICE_INTERFACE, 'ListSlices', '', [])) as [SliceTuple[]];
    report.slices = slices.map(sliceFromBus);
  }
  return report;
}

/** An sbd that answers but has no GetStatus (older than issue 15): its typed properties then. */
const lacksGetStatus = (err: unknown): boolean => err instanceof dbus.DBusError && /UnknownMethod/.test(err.type) && /GetStatus/.test(err.text ?? err.message);

/**
 * sbd's report in one call (GetStatus, as the fast path of main.ts asks it); by its typed
 * properties and lists from an sbd without GetStatus; undefined when nobody owns its name on
 * this bus or sbd is still starting.
 */
export async function queryService(bus: dbus.MessageBus): Promise<StatusReport | undefined> {
  try {
    try {
      const [text] = await callService(bus, SERVICE_INTERFACE, 'GetStatus', '', []);
      return statusFromJson(String(text));
    } catch (err) {
      if (!lacksGetStatus(err)) throw err;
      return await queryTyped(bus);
    }
  } catch (err) {
    if (err instanceof dbus.DBusError && /ServiceUnknown|NameHasNoOwner/.test(err.type)) return undefined;
    if (isStarting(err)) return undefined; // not ready: read as without sbd until it answers
    throw err;
  }
}

/**
 * `sbctl status`: sbd's report when it runs (its answer alone: no config read, no listing of
 * systemd's units); otherwise `withoutService`, which reads systemd and the cgroup files itself.
 */
export async function status(bus: dbus.MessageBus, withoutService: () => Promise<StatusReport>, session: string | undefined, json: boolean): Promise<number> {
  return printReport((await queryService(bus)) ?? (await withoutService()), session, json);
}
