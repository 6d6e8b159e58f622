/**
 * `sbctl watch [--json]`: sbd's incidents as they happen (its Incident signal), one per line,
 * until interrupted. Exit 3 when sbd is not running. Only the unique name that owns sbd's bus
 * name is heard (followed when sbd restarts): any process of the user can send a signal on
 * sbd's path and interface.
 */
import * as dbus from 'dbus-next';
import { SERVICE_INTERFACE, SERVICE_NAME, SERVICE_PATH } from '../daemon/bus-name';
import { INCIDENT_SIGNATURE, type IncidentArgs, incidentFromBus } from '../daemon/bus-types';
import type { Incident } from '../daemon/incidents';
import { followNameOwner } from '../systemd/name-owner';
import { jsonValue } from './status';

export function formatIncident(i: Incident): string {
  const at = new Date(i.atMs).toISOString().replace('T', ' ').slice(0, 19);
  return `${at}  ${i.session.padEnd(16)} ${i.type.padEnd(16)} ${i.observeOnly ? '[observe-only] ' : ''}${i.message}`;
}

/** Resolves with an exit code: 3 when sbd is not running; otherwise runs until the bus closes. */
export async function watchIncidents(bus: dbus.MessageBus, json: boolean, write: (line: string) => void): Promise<number> {
  const sbd = followNameOwner(bus, SERVICE_NAME);
  await sbd.start();
  await bus.call(
    new dbus.Message({
      destination: 'org.freedesktop.DBus', path: '/org/freedesktop/DBus', interface: 'org.freedesktop.DBus', member: 'AddMatch', signature: 's',
      body: [`type='signal',sender='${SERVICE_NAME}',interface='${SERVICE_INTERFACE}',member='Incident',path='${SERVICE_PATH}'`],
    }),
  );
  if (sbd.owner === '') {
    process.stderr.write(`sbctl watch: sbd is not running (no ${SERVICE_NAME} on the user bus): sbctl install --now\n`);
    return 3;
  }
  bus.on('message', (msg: dbus.Message) => {
    if (msg.type !== dbus.MessageType.SIGNAL || msg.interface !== SERVICE_INTERFACE || msg.member !== 'Incident' || msg.path !== SERVICE_PATH || msg.signature !== INCIDENT_SIGNATURE || !sbd.sent(msg)) return;
    const incident = incidentFromBus(msg.body as IncidentArgs);
    write(json ? JSON.stringify(incident, jsonValue) : formatIncident(incident));
  });
  return new Promise((resolve) => bus.on('error', () => resolve(1)));
}
