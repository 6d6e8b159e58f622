/**
 * `sbctl watch [--json]`: sbd's incidents as they happen (its Incident signal), one per line,
 * until interrupted. Exit 3 when sbd is not running.
 */
import * as dbus from 'dbus-next';
import { SERVICE_INTERFACE, SERVICE_NAME, SERVICE_PATH } from '../daemon/bus-name';
import type { Incident } from '../daemon/incidents';
import { queryService } from './status';

export function formatIncident(i: Incident): string {
  const at = new Date(i.atMs).toISOString().replace('T', ' ').slice(0, 19);
  return `${at}  ${i.session.padEnd(16)} ${i.type.padEnd(16)} ${i.observeOnly ? '[observe-only] ' : ''}${i.message}`;
}

/** Resolves with an exit code: 3 when sbd is not running; otherwise runs until the bus closes. */
export async function watchIncidents(bus: dbus.MessageBus, json: boolean, write: (line: string) => void): Promise<number> {
  await bus.call(
    new dbus.Message({
      destination: 'org.freedesktop.DBus', path: '/org/freedesktop/DBus', interface: 'org.freedesktop.DBus', member: 'AddMatch', signature: 's',
      body: [`type='signal',interface='${SERVICE_INTERFACE}',member='Incident',path='${SERVICE_PATH}'`],
    }),
  );
  if ((await queryService(bus)) === undefined) {
    process.stderr.write(`sbctl watch: sbd is not running (no ${SERVICE_NAME} on the user bus): sbctl install --now\n`);
    return 3;
  }
  bus.on('message', (msg: dbus.Message) => {
    if (msg.type !== dbus.MessageType.SIGNAL || msg.interface !== SERVICE_INTERFACE || msg.member !== 'Incident') return;
    const text = String(msg.body[0]);
    if (json) write(text);
    else {
      try {
        write(formatIncident(JSON.parse(text) as Incident));
      } catch {
        write(text);
      }
    }
  });
  return new Promise((resolve) => bus.on('error', () => resolve(1)));
}
