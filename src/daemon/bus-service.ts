/**
 * sbd's face on the user bus, for sbctl and other tools: `Status() -> s` (the StatusReport as
 * JSON) and the `Incident(s)` signal (an incident as JSON). Exported without decorators, which
 * dbus-next cannot use from TypeScript here (design.md §9).
 */
import * as dbus from 'dbus-next';
import { SERVICE_INTERFACE, SERVICE_NAME, SERVICE_PATH } from './bus-name';

/** DBUS_NAME_FLAG_DO_NOT_QUEUE: fail at once when another sbd holds the name. */
const DO_NOT_QUEUE = 4;
/** DBUS_REQUEST_NAME_REPLY_PRIMARY_OWNER. */
const PRIMARY_OWNER = 1;

class ManagerInterface extends dbus.interface.Interface {
  constructor(private readonly status: () => string) {
    super(SERVICE_INTERFACE);
  }

  Status(): string {
    return this.status();
  }

  /** Emits the signal: dbus-next sends what a signal member returns. */
  Incident(json: string): string {
    return json;
  }
}

ManagerInterface.configureMembers({
  methods: { Status: { inSignature: '', outSignature: 's' } },
  signals: { Incident: { signature: 's' } },
});

export interface BusService {
  emitIncident(incident: object): void;
}

/** Export the interface and take the well-known name; throws when another sbd runs. */
export async function exportService(bus: dbus.MessageBus, status: () => object): Promise<BusService> {
  const iface = new ManagerInterface(() => JSON.stringify(status()));
  bus.export(SERVICE_PATH, iface);
  const reply = await bus.requestName(SERVICE_NAME, DO_NOT_QUEUE);
  if (reply !== PRIMARY_OWNER) {
    throw new Error(`another sbd owns ${SERVICE_NAME} on this user bus: only one may run per user`);
  }
  return { emitIncident: (incident) => iface.Incident(JSON.stringify(incident)) };
}
