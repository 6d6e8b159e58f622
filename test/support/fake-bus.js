// @ts-check
'use strict';
// A bus daemon in memory, for host tests of what goes over D-Bus: each connection is a real
// dbus-next MessageBus, and every message is marshalled and unmarshalled by dbus-next as on a
// socket. Like dbus-daemon, the broker sets each message's sender to the unique name of the
// connection that sent it, answers Hello, RequestName, ReleaseName, GetNameOwner and AddMatch,
// and emits NameOwnerChanged. Unlike it, every broadcast signal reaches every connection
// whatever its match rules: the worst case a receiver must handle (dbus-next itself hands
// every message on a connection to its 'message' listeners).
const { EventEmitter } = require('node:events');
const dbus = require('dbus-next');
/** @type {new (conn: any) => import('dbus-next').MessageBus} */
const MessageBus = require('dbus-next/lib/bus');
const { unmarshall } = require('dbus-next/lib/message');
const { marshallMessage, messageToJsFmt } = require('dbus-next/lib/marshall-compat');

const DRIVER = 'org.freedesktop.DBus';
const { METHOD_CALL, METHOD_RETURN, ERROR, SIGNAL } = dbus.MessageType;

class FakeBroker {
  constructor() {
    /** @type {Map<string, EventEmitter & {deliver: (m: any) => void}>} unique name -> connection */
    this.conns = new Map();
    /** @type {Map<string, string>} well-known name -> unique name */
    this.owners = new Map();
    this.nextId = 1;
    this.serial = 1;
  }

  /** A new client connection; resolves once its Hello was answered. */
  async connect() {
    const unique = `:1.${this.nextId++}`;
    const conn = /** @type {any} */ (new EventEmitter());
    conn.unique = unique;
    conn.message = (/** @type {any} */ msg) => {
      // on the wire and back, as dbus-next's socket does
      const [data] = marshallMessage(msg);
      // (dbus-next's unmarshall cannot read a message without a body)
      const copy = new dbus.Message(msg.signature ? messageToJsFmt(unmarshall(data)) : { ...msg, serial: msg.serial, body: [] });
      copy.sender = unique;
      setImmediate(() => this.route(copy));
    };
    conn.deliver = (/** @type {any} */ msg) => setImmediate(() => { if (this.conns.get(unique) === conn) conn.emit('message', msg); });
    conn.stream = { end: () => this.disconnect(unique) };
    conn.end = conn.stream.end;
    this.conns.set(unique, conn);
    const bus = new MessageBus(conn);
    await new Promise((resolve) => bus.once('connect', resolve));
    return bus;
  }

  /** @param {string} unique */
  disconnect(unique) {
    if (!this.conns.delete(unique)) return;
    for (const [name, owner] of [...this.owners]) {
      if (owner !== unique) continue;
      this.owners.delete(name);
      this.ownerChanged(name, unique, '');
    }
    this.ownerChanged(unique, unique, '');
  }

  /** @param {string} name @param {string} from @param {string} to */
  ownerChanged(name, from, to) {
    this.broadcast(this.fromDriver(dbus.Message.newSignal('/org/freedesktop/DBus', DRIVER, 'NameOwnerChanged', 'sss', [name, from, to])));
  }

  /** @param {any} msg */
  fromDriver(msg) {
    msg.sender = DRIVER;
    msg.serial = this.serial++;
    return msg;
  }

  /** @param {any} msg */
  broadcast(msg) {
    for (const c of this.conns.values()) c.deliver(msg);
  }

  /** @param {any} msg */
  route(msg) {
    if (msg.type === METHOD_CALL && msg.destination === DRIVER) return this.driver(msg);
    if (msg.type === SIGNAL && !msg.destination) return this.broadcast(msg);
    const to = msg.destination?.startsWith(':') ? msg.destination : this.owners.get(msg.destination ?? '');
    const conn = to === undefined ? undefined : this.conns.get(to);
    if (conn) return conn.deliver(msg);
    if (msg.type === METHOD_CALL) this.reply(msg, this.fromDriver(dbus.Message.newError(msg, 'org.freedesktop.DBus.Error.ServiceUnknown', `The name ${msg.destination} was not provided by any .service files`)));
  }

  /** @param {any} call @param {any} reply */
  reply(call, reply) {
    reply.destination = call.sender;
    this.conns.get(call.sender)?.deliver(reply);
  }

  /** The bus driver's own methods. @param {any} msg */
  driver(msg) {
    const ok = (/** @type {string} */ sig, /** @type {unknown[]} */ body) => this.reply(msg, this.fromDriver(dbus.Message.newMethodReturn(msg, sig, body)));
    switch (msg.member) {
      case 'Hello': return ok('s', [msg.sender]);
      case 'AddMatch': case 'RemoveMatch': return ok('', []);
      case 'GetNameOwner': {
        const [name] = msg.body;
        const owner = name.startsWith(':') ? (this.conns.has(name) ? name : undefined) : this.owners.get(name);
        if (owner === undefined) return this.reply(msg, this.fromDriver(dbus.Message.newError(msg, 'org.freedesktop.DBus.Error.NameHasNoOwner', `Could not get owner of name '${name}': no such name`)));
        return ok('s', [owner]);
      }
      case 'RequestName': {
        const [name] = msg.body;
        const owner = this.owners.get(name);
        if (owner === msg.sender) return ok('u', [4]); // ALREADY_OWNER
        if (owner !== undefined) return ok('u', [3]); // EXISTS (as with DO_NOT_QUEUE)
        this.owners.set(name, msg.sender);
        ok('u', [1]); // PRIMARY_OWNER
        return this.ownerChanged(name, '', msg.sender);
      }
      case 'ReleaseName': {
        const [name] = msg.body;
        if (this.owners.get(name) !== msg.sender) return ok('u', [3]); // NOT_OWNER
        this.owners.delete(name);
        ok('u', [1]);
        return this.ownerChanged(name, msg.sender, '');
      }
      default:
        return this.reply(msg, this.fromDriver(dbus.Message.newError(msg, 'org.freedesktop.DBus.Error.UnknownMethod', `no ${msg.member} in this fake bus`)));
    }
  }
}

/** Let every queued delivery happen (each hop is one setImmediate). */
async function settle(rounds = 10) {
  for (let i = 0; i < rounds; i++) await new Promise((r) => setImmediate(r));
}

module.exports = { FakeBroker, settle, METHOD_RETURN, ERROR };
