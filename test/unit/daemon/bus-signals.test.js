// @ts-check
'use strict';
// Issue 15, item 5: sbd's Incident and Notice signals marshalled by its own writer (bus-lite) and
// written to dbus-next's connection. Against a real dbus-daemon: a dbus-next client (sbctl watch)
// receives what dbus-next itself would have sent, value for value, in order, with the sender and
// a serial of sbd's; where the connection is not a plain stream, dbus-next sends them as before.
const test = require('node:test');
const assert = require('node:assert/strict');
const dbus = require('dbus-next');
const fc = require('fast-check');
const { unmarshall } = require('dbus-next/lib/message');
const { messageToJsFmt } = require('dbus-next/lib/marshall-compat');
const { exportService, signalWriter } = require('../../../dist/daemon/bus-service.js');
const { incidentToBus, INCIDENT_SIGNATURE } = require('../../../dist/daemon/bus-types.js');
const { decodeMessage, encodeSignal } = require('../../../dist/bus-lite/wire.js');
const { watchIncidents } = require('../../../dist/cli/watch.js');
const { privateBus } = require('../../support/dbus-daemon');
const { BASIC_STRUCT, basicValues, dictKey, text } = require('../../support/dbus-arbitraries');

const MiB = 2 ** 20;
const settle = (ms = 50) => new Promise((r) => setTimeout(r, ms));
const incident = (n) => ({
  type: 'standing-still', unit: `s${n}.scope`, session: `s${n}`, atMs: 1_764_500_000_123 + n, message: `standing still ${n}`, observeOnly: false,
  share: 0.9, anonShare: 0.97, evidence: ['own-high-moved', 'near-own-brake'], deadlineS: 600, fromBytes: Infinity, toBytes: 96 * MiB,
});

/** sbd's service and a client running sbctl watch, on a private dbus-daemon; `lines` fills with what watch prints. */
async function sbdAndWatcher(/** @type {import('node:test').TestContext} */ t) {
  const daemon = await privateBus();
  t.after(() => daemon.stop());
  const sbd = dbus.sessionBus({ busAddress: daemon.address });
  const client = dbus.sessionBus({ busAddress: daemon.address });
  t.after(() => { sbd.disconnect(); client.disconnect(); });
  const service = await exportService(sbd, { health: () => /** @type {any} */ ({}), sessions: () => [], slices: () => [] });
  const lines = [];
  void watchIncidents(client, true, (l) => lines.push(l));
  return { sbd, client, service, lines: /** @type {string[]} */ (lines) };
}

test('a signal as written is what dbus-next reads: a signal, no reply expected, path, interface, member, body', () => {
  const args = incidentToBus(/** @type {any} */ (incident(1)));
  const m = messageToJsFmt(unmarshall(encodeSignal(7, { path: '/dev/sessionbrake/Manager1', interface: 'dev.sessionbrake.Manager1', member: 'Incident', signature: INCIDENT_SIGNATURE, body: args })));
  assert.deepEqual([m.type, m.flags, m.serial, m.path, m.interface, m.member, m.signature], [4, 1, 7, '/dev/sessionbrake/Manager1', 'dev.sessionbrake.Manager1', 'Incident', INCIDENT_SIGNATURE]);
  assert.deepEqual(m.body.slice(0, 6), args.slice(0, 6));
  assert.deepEqual(Object.fromEntries(Object.entries(m.body[6]).map(([k, v]) => [k, [v.signature, v.value]])), Object.fromEntries(Object.entries(args[6]).map(([k, v]) => [k, [v.signature, v.value]])));
});

test("signals of the same member share their header's fields, each with its own serial and body length; another member has its own", () => {
  const iface = { path: '/dev/sessionbrake/Manager1', interface: 'dev.sessionbrake.Manager1' };
  const read = (b) => messageToJsFmt(unmarshall(b));
  const a = read(encodeSignal(10, { ...iface, member: 'Incident', signature: INCIDENT_SIGNATURE, body: incidentToBus(/** @type {any} */ (incident(1))) }));
  const n = read(encodeSignal(11, { ...iface, member: 'Notice', signature: 'ss', body: ['s1', 'a notice'] }));
  const long = { ...incident(2), message: 'x'.repeat(3000) };
  const b = read(encodeSignal(12, { ...iface, member: 'Incident', signature: INCIDENT_SIGNATURE, body: incidentToBus(/** @type {any} */ (long)) }));
  const other = read(encodeSignal(14, { ...iface, member: 'Recorded', signature: INCIDENT_SIGNATURE, body: incidentToBus(/** @type {any} */ (incident(3))) }));
  const bare = decodeMessage(encodeSignal(13, { ...iface, member: 'Ping' })); // dbus-next reads no message without a signature
  assert.deepEqual([a.serial, a.member, a.body[4]], [10, 'Incident', 'standing still 1']);
  assert.deepEqual([n.serial, n.member, n.signature, n.body], [11, 'Notice', 'ss', ['s1', 'a notice']]);
  assert.deepEqual([b.serial, b.member, b.body[1], b.body[4].length], [12, 'Incident', 's2.scope', 3000], 'a body grown past the first buffer, its length as long');
  assert.deepEqual([other.serial, other.member, other.body[4]], [14, 'Recorded', 'standing still 3'], 'the same signature, another member');
  assert.deepEqual([bare.type, bare.serial, bare.signature, bare.body], [4, 13, '', []]);
});

test('a number outside its type is refused by name, never wrapped into another value', () => {
  const sig = (signature, body) => () => encodeSignal(1, { path: '/p', interface: 'x.y', member: 'S', signature, body });
  assert.throws(sig('u', [-1]), { name: 'Error', message: /"u" takes a whole number from 0 to 4294967295, not -1/ });
  assert.throws(sig('u', [2 ** 32]), /"u" takes a whole number/);
  assert.throws(sig('y', [256]), /"y" takes a whole number from 0 to 255/);
  assert.throws(sig('i', [1.5]), /"i" takes a whole number/);
  assert.throws(sig('t', [-1n]), /"t" takes a whole number from 0 to 18446744073709551615, not -1/);
  assert.throws(sig('x', [2n ** 63n]), /"x" takes a whole number/);
  const m = messageToJsFmt(unmarshall(sig('yuixt', [255, 2 ** 32 - 1, -(2 ** 31), -(2n ** 63n), 2n ** 64n - 1n])()));
  assert.deepEqual(m.body, [255, 2 ** 32 - 1, -(2 ** 31), -(2n ** 63n), 2n ** 64n - 1n]);
});

// (no empty dict: dbus-next 0.10.2 reads one without its padding; the values within dbus-next's own
// limits: test/support/dbus-arbitraries.js)
test('property: any values of every basic type, in structs, arrays, dicts and variants, as written, are what dbus-next reads', () => {
  const sig = `${BASIC_STRUCT}asa{su}a(yt)a{sv}`;
  const basic = basicValues();
  const key = dictKey();
  const variant = fc.oneof(
    fc.double({ noNaN: true, noDefaultInfinity: true }).filter((d) => !Object.is(d, -0)).map((v) => new dbus.Variant('d', v)),
    fc.bigInt({ min: 0n, max: 2n ** 64n - 1n }).map((v) => new dbus.Variant('t', v)),
    fc.array(text()).map((v) => new dbus.Variant('as', v)),
    text().map((v) => new dbus.Variant('s', v)),
  );
  fc.assert(fc.property(basic, fc.array(text()), fc.dictionary(key, fc.integer({ min: 0, max: 2 ** 32 - 1 }), { minKeys: 1 }), fc.array(fc.tuple(fc.integer({ min: 0, max: 255 }), fc.bigInt({ min: 0n, max: 2n ** 64n - 1n }))), fc.dictionary(key, variant, { minKeys: 1 }), (b, as, dict, pairs, vars) => {
    const m = messageToJsFmt(unmarshall(encodeSignal(3, { path: '/p', interface: 'x.y', member: 'S', signature: sig, body: [b, as, { ...dict }, pairs, { ...vars }] })));
    assert.equal(m.signature, sig);
    assert.deepEqual(m.body.slice(0, 4), [b, as, { ...dict }, pairs]);
    assert.deepEqual(Object.fromEntries(Object.entries(m.body[4]).map(([k, v]) => [k, [v.signature, v.value]])), Object.fromEntries(Object.entries(vars).map(([k, v]) => [k, [v.signature, v.value]])));
  }), { numRuns: 300 });
});

test('on a real dbus-daemon: sbctl watch receives each incident as told, in order, and notices too', async (t) => {
  const { sbd, client, service, lines } = await sbdAndWatcher(t);
  const notices = [];
  await client.call(new dbus.Message({ destination: 'org.freedesktop.DBus', path: '/org/freedesktop/DBus', interface: 'org.freedesktop.DBus', member: 'AddMatch', signature: 's', body: ["type='signal',interface='dev.sessionbrake.Manager1',member='Notice'"] }));
  client.on('message', (m) => { if (m.member === 'Notice') notices.push(m); });
  await settle(200);
  const sent = [1, 2, 3].map(incident);
  for (const i of sent) service.emitIncident(/** @type {any} */ (i));
  service.emitNotice('s1', { id: 3, atMs: 1_764_500_000_500, from: 'ab12', kind: 'match', text: 'log: 1 new line matched', lines: ['ERROR x'], monitor: 'ab12cd', through: 42 });
  for (let i = 0; i < 100 && (lines.length < 3 || notices.length < 1); i++) await settle(20);
  assert.deepEqual(lines.map((l) => JSON.parse(l)), sent.map((i) => ({ ...i, fromBytes: 'infinity' })), 'each incident as told, in order');
  assert.equal(notices.length, 1);
  assert.deepEqual(notices[0].body, ['s1', 3n, 1_764_500_000_500_000n, 'ab12', 'match', 'log: 1 new line matched', ['ERROR x'], 0]);
  assert.equal(notices[0].sender, sbd.name, "sent from sbd's own connection");
  // a tailed line holding a NUL byte (no D-Bus string may): sent as U+FFFD, and sbd stays connected
  service.emitNotice('s1', { id: 4, atMs: 1_764_500_000_600, from: 'ab12', kind: 'match', text: 'bin\0ary: 1 new line matched', lines: ['ERROR \0 x'] });
  service.emitIncident(/** @type {any} */ (incident(4)));
  for (let i = 0; i < 100 && (lines.length < 4 || notices.length < 2); i++) await settle(20);
  assert.deepEqual(notices[1]?.body.slice(5, 7), ['bin\uFFFDary: 1 new line matched', ['ERROR \uFFFD x']]);
  assert.equal(JSON.parse(lines[3]).unit, 's4.scope', 'the connection lives on: the next signal arrives');
  assert.throws(() => encodeSignal(1, { path: '/p', interface: 'x.y', member: 'S', signature: 's', body: ['a\0b'] }), /holds no NUL byte/, 'the writer itself refuses one');
});

test('where the connection is not a plain stream (fd passing, or closed), dbus-next sends it', () => {
  const used = [];
  const fake = (stream) => /** @type {any} */ ({ _connection: { stream }, newSerial: () => 9 });
  const written = [];
  signalWriter(fake({ writable: true, supportsUnixFd: true, write: (b) => written.push(b) }), (m) => used.push(m))('Incident', 's', ['x']);
  signalWriter(fake({ writable: false, write: (b) => written.push(b) }), (m) => used.push(m))('Notice', 's', ['x']);
  signalWriter(fake(undefined), (m) => used.push(m))('Incident', 's', ['x']);
  assert.deepEqual(used, ['Incident', 'Notice', 'Incident']);
  assert.equal(written.length, 0);
  signalWriter(fake({ writable: true, write: (b) => written.push(b) }), (m) => used.push(m))('Incident', 's', ['x']);
  assert.equal(written.length, 1, 'a plain stream: one message, written whole');
  assert.equal(unmarshall(written[0]).serial, 9, "the bus's serial");
});

test("the signals of one turn of the loop leave in one write: the stream is corked at the first, uncorked on the next turn, the order kept", () => {
  const events = [];
  /** @type {Array<() => void>} */
  const turns = [];
  let serial = 0;
  const stream = { writable: true, write: (/** @type {Buffer} */ b) => events.push(`write ${unmarshall(b).serial}`), cork: () => events.push('cork'), uncork: () => events.push('uncork') };
  const send = signalWriter(/** @type {any} */ ({ _connection: { stream }, newSerial: () => ++serial }), () => assert.fail('a plain stream needs no fallback'), (fn) => turns.push(fn));
  for (let i = 0; i < 3; i++) send('Incident', 's', ['x']);
  assert.deepEqual(events, ['cork', 'write 1', 'write 2', 'write 3'], 'corked once, each message written in order');
  assert.equal(turns.length, 1, 'one uncork for the turn');
  turns.shift()?.();
  assert.deepEqual(events.slice(4), ['uncork']);
  send('Notice', 's', ['y']);
  assert.deepEqual(events.slice(5), ['cork', 'write 4'], 'the next turn corks anew');
  turns.shift()?.();
  assert.deepEqual(events.slice(7), ['uncork']);
});

test('on a real dbus-daemon: a burst of 50 signals in one turn arrives whole and in order, and a call made meanwhile is answered', async (t) => {
  const { sbd, client, service, lines } = await sbdAndWatcher(t);
  await settle(200);
  const sent = Array.from({ length: 50 }, (_, n) => incident(n));
  for (const i of sent) service.emitIncident(/** @type {any} */ (i));
  // sbd's own call in the same turn: written behind the signals, once the stream is uncorked
  const answer = sbd.call(new dbus.Message({ destination: 'org.freedesktop.DBus', path: '/org/freedesktop/DBus', interface: 'org.freedesktop.DBus', member: 'GetId' }));
  for (let i = 0; i < 200 && lines.length < 50; i++) await settle(20);
  assert.deepEqual(lines.map((l) => JSON.parse(l).unit), sent.map((i) => i.unit));
  assert.match(String((await answer)?.body?.[0]), /^[0-9a-f]{32}$/);
});
