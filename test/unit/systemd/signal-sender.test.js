// @ts-check
'use strict';
// Issue 12, fault 6: systemd's signals are believed only from the unique name that owns
// org.freedesktop.systemd1, and that owner is followed when it changes (the manager re-exec'd).
// A same-user process can send a UnitRemoved of its own on systemd's path and interface: a match
// rule with sender= is advice to the bus, and dbus-next hands every message to its listeners.
// On a bus in memory (test/support/fake-bus.js); the real one: guest test 47-dbus-trust.
const test = require('node:test');
const assert = require('node:assert/strict');
const dbus = require('dbus-next');
const { FakeBroker, settle } = require('../../support/fake-bus');
const { DbusUserManager } = require('../../../dist/systemd/user-manager.js');

const SYSTEMD = 'org.freedesktop.systemd1';
const MANAGER = `${SYSTEMD}.Manager`;
const UNIT_PATH = '/org/freedesktop/systemd1/unit/s_2escope';

const JOB = '/org/freedesktop/systemd1/job/7';

/** A fake systemd: owns systemd's name, answers StartUnit with job 7 and every other call
 * (Subscribe) with an empty reply. */
async function fakeSystemd(broker) {
  const bus = /** @type {any} */ (await broker.connect());
  bus.calls = [];
  bus.addMethodHandler((msg) => {
    bus.calls.push(msg.member);
    bus.send(msg.member === 'StartUnit' ? dbus.Message.newMethodReturn(msg, 'o', [JOB]) : dbus.Message.newMethodReturn(msg, '', []));
    return true;
  });
  await bus.requestName(SYSTEMD, 4);
  return bus;
}

const unitRemoved = (unit) => dbus.Message.newSignal('/org/freedesktop/systemd1', MANAGER, 'UnitRemoved', 'so', [unit, '/org/freedesktop/systemd1/unit/x']);
const unitNew = (unit) => dbus.Message.newSignal('/org/freedesktop/systemd1', MANAGER, 'UnitNew', 'so', [unit, '/org/freedesktop/systemd1/unit/x']);
const propsChanged = () => dbus.Message.newSignal(UNIT_PATH, 'org.freedesktop.DBus.Properties', 'PropertiesChanged', 'sa{sv}as', ['org.freedesktop.systemd1.Unit', { ActiveState: new dbus.Variant('s', 'inactive') }, []]);

async function setUp() {
  const broker = new FakeBroker();
  const systemd = await fakeSystemd(broker);
  const manager = await DbusUserManager.attach(await broker.connect());
  const events = [];
  manager.onUnitEvent((e) => events.push(`${e.type} ${e.unit}`));
  const faker = await broker.connect();
  return { broker, systemd, manager, events, faker };
}

test("another connection's UnitRemoved, UnitNew and PropertiesChanged on systemd's path and interface are not believed", async () => {
  const { systemd, manager, events, faker } = await setUp();
  faker.send(unitRemoved('s.scope'));
  faker.send(unitNew('fake.scope'));
  faker.send(propsChanged());
  await settle();
  assert.deepEqual(events, [], 'nothing from a stranger');
  systemd.send(unitRemoved('s.scope'));
  systemd.send(propsChanged());
  await settle();
  assert.deepEqual(events, ['unit-removed s.scope', 'unit-changed s.scope'], "systemd's own are");
  manager.close();
});

test("a stranger's JobRemoved does not end a job systemd is still running", async () => {
  const { systemd, manager, faker } = await setUp();
  let outcome = 'pending';
  manager.startUnit('x.service').then(() => { outcome = 'done'; }, (err) => { outcome = err.message; });
  await settle();
  faker.send(dbus.Message.newSignal('/org/freedesktop/systemd1', MANAGER, 'JobRemoved', 'uoss', [7, JOB, 'x.service', 'done']));
  await settle();
  assert.equal(outcome, 'pending', 'a stranger cannot end the job');
  systemd.send(dbus.Message.newSignal('/org/freedesktop/systemd1', MANAGER, 'JobRemoved', 'uoss', [7, JOB, 'x.service', 'failed']));
  await settle();
  assert.match(outcome, /starting x\.service: the job ended "failed"/);
  manager.close();
});

test("systemd's name moving to a new connection (re-exec) is followed; the old one is no longer believed", async () => {
  const { broker, systemd, manager, events, faker } = await setUp();
  const oldName = systemd.name;
  systemd.disconnect();
  await settle();
  const again = await fakeSystemd(broker);
  await settle();
  assert.notEqual(again.name, oldName);
  again.send(unitNew('after.scope'));
  faker.send(unitRemoved('after.scope'));
  await settle();
  assert.deepEqual(events, ['unit-new after.scope'], 'the new owner is believed, a stranger still not');
  assert.deepEqual(again.calls, ['Subscribe'], 'subscribed to the new manager');
  manager.close();
});

test("while nobody owns systemd's name nothing is believed; then its new owner is", async () => {
  const { broker, systemd, manager, events, faker } = await setUp();
  systemd.disconnect();
  await settle();
  faker.send(unitRemoved('s.scope'));
  await settle();
  assert.deepEqual(events, [], 'nobody owns the name: nothing is believed');
  const again = await fakeSystemd(broker);
  await settle();
  again.send(unitRemoved('s.scope'));
  await settle();
  assert.deepEqual(events, ['unit-removed s.scope']);
  manager.close();
});

test("systemd's PropertiesChanged of a unit's type interface is not an event: its Unit interface's, which always follows, is", async () => {
  const { systemd, manager, events } = await setUp();
  systemd.send(dbus.Message.newSignal(UNIT_PATH, 'org.freedesktop.DBus.Properties', 'PropertiesChanged', 'sa{sv}as', ['org.freedesktop.systemd1.Scope', { Result: new dbus.Variant('s', 'success') }, []]));
  await settle();
  assert.deepEqual(events, []);
  systemd.send(propsChanged());
  await settle();
  assert.deepEqual(events, ['unit-changed s.scope']);
  manager.close();
});

test('a unit-changed event carries the ActiveState and InvocationID the signal held (the registry takes a stop from it without a read)', async () => {
  const { systemd, manager } = await setUp();
  const seen = [];
  manager.onUnitEvent((e) => seen.push(e));
  const id = Buffer.from('0123456789abcdef0123456789abcdef', 'hex');
  systemd.send(dbus.Message.newSignal(UNIT_PATH, 'org.freedesktop.DBus.Properties', 'PropertiesChanged', 'sa{sv}as', ['org.freedesktop.systemd1.Unit', { ActiveState: new dbus.Variant('s', 'deactivating'), SubState: new dbus.Variant('s', 'stop-sigterm'), InvocationID: new dbus.Variant('ay', id) }, []]));
  systemd.send(dbus.Message.newSignal(UNIT_PATH, 'org.freedesktop.DBus.Properties', 'PropertiesChanged', 'sa{sv}as', ['org.freedesktop.systemd1.Unit', {}, ['ActiveState']]));
  await settle();
  assert.deepEqual(seen.map((e) => [e.activeState, e.invocationId]), [['deactivating', '0123456789abcdef0123456789abcdef'], [undefined, undefined]], 'values when carried; none when only invalidated');
  manager.close();
});
