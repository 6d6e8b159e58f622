/**
 * The unique name that owns a well-known bus name, followed as it moves (the bus's own
 * NameOwnerChanged). A signal is believed only when its sender is that unique name: the bus
 * stamps every message with its sender's unique name, and only the bus itself may send as
 * org.freedesktop.DBus, so a process cannot pass off its signal as systemd's or sbd's.
 */
import * as dbus from 'dbus-next';

const DRIVER = 'org.freedesktop.DBus';
const DRIVER_PATH = '/org/freedesktop/DBus';

export interface NameOwner {
  /** Ask the bus to send the name's owner changes, then read its owner now; call once. */
  start(): Promise<void>;
  /** The unique name that owns it now; '' while nobody does. */
  readonly owner: string;
  /** True when `msg` comes from the name's owner now. */
  sent(msg: dbus.Message): boolean;
}

/** Follow `name` on `bus`; `onMoved` hears each new owner ('' when the name was released). */
export function followNameOwner(bus: dbus.MessageBus, name: string, onMoved: (owner: string) => void = () => {}): NameOwner {
  let owner = '';
  /** Counts the owner changes seen, so that a GetNameOwner answer older than one is dropped. */
  let moves = 0;
  bus.on('message', (msg: dbus.Message) => {
    if (msg.type !== dbus.MessageType.SIGNAL || msg.sender !== DRIVER || msg.path !== DRIVER_PATH || msg.interface !== DRIVER || msg.member !== 'NameOwnerChanged') return;
    const [changed, , now] = msg.body as [string, string, string];
    if (changed !== name) return;
    owner = now;
    moves++;
    onMoved(now);
  });
  return {
    async start() {
      await bus.call(
        new dbus.Message({
          destination: DRIVER, path: DRIVER_PATH, interface: DRIVER, member: 'AddMatch', signature: 's',
          body: [`type='signal',sender='${DRIVER}',path='${DRIVER_PATH}',interface='${DRIVER}',member='NameOwnerChanged',arg0='${name}'`],
        }),
      );
      const before = moves;
      let now = '';
      try {
        const reply = await bus.call(new dbus.Message({ destination: DRIVER, path: DRIVER_PATH, interface: DRIVER, member: 'GetNameOwner', signature: 's', body: [name] }));
        now = String(reply?.body[0] ?? '');
      } catch (err) {
        if (!(err instanceof dbus.DBusError && /NameHasNoOwner/.test(err.type))) throw err;
      }
      if (moves === before) owner = now; // else the change seen meanwhile is at least as new as the answer
    },
    get owner() {
      return owner;
    },
    sent: (msg) => owner !== '' && msg.sender === owner,
  };
}
