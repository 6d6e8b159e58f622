// @ts-check
'use strict';
// A session's unit, once ended, is not read again and again. systemd loads a unit whose object
// path is read (a "not-found" stub), says so with UnitNew, and unloads it at once (UnitRemoved);
// the registry reads a unit on UnitNew. With getUnit's first Get loading the unit, that was a loop
// without end: three ended sessions held sbd at 65 % of a CPU in the guest (busctl monitor: 1,640
// UnitNew and UnitRemoved of each in 20 s). Here the real registry and DbusUserManager, over a bus
// in memory (test/support/fake-bus.js), against a fake systemd that loads and unloads like that.
const test = require('node:test');
const assert = require('node:assert/strict');
const dbus = require('dbus-next');
const { FakeBroker, settle } = require('../../support/fake-bus');
const { DbusUserManager } = require('../../../dist/systemd/user-manager.js');
const { SessionRegistry } = require('../../../dist/sessions/registry.js');

const SYSTEMD = 'org.freedesktop.systemd1';
const MANAGER = `${SYSTEMD}.Manager`;
const unitPath = (unit) => `/org/freedesktop/systemd1/unit/${unit.replace(/[^A-Za-z0-9]/g, (c) => `_${c.charCodeAt(0).toString(16).padStart(2, '0')}`)}`;
const unitOfPath = (p) => p.split('/').pop().replace(/_([0-9a-f]{2})/g, (_, h) => String.fromCharCode(parseInt(h, 16)));

/** systemd as it treats units it has not loaded: GetUnit answers NoSuchUnit; a Get on such a
 * unit's path loads a stub ("not-found"), announced by UnitNew, unloaded on the next turn with
 * UnitRemoved. Counts every call. */
async function loadingSystemd(broker) {
  const bus = /** @type {any} */ (await broker.connect());
  bus.calls = { GetUnit: 0, Get: 0, ListUnits: 0 };
  const signal = (member, unit) => bus.send(dbus.Message.newSignal('/org/freedesktop/systemd1', MANAGER, member, 'so', [unit, unitPath(unit)]));
  const loaded = new Set();
  bus.addMethodHandler((msg) => {
    bus.calls[msg.member] = (bus.calls[msg.member] ?? 0) + 1;
    if (msg.member === 'GetUnit') {
      const [unit] = msg.body;
      bus.send(loaded.has(unit) ? dbus.Message.newMethodReturn(msg, 'o', [unitPath(unit)]) : dbus.Message.newError(msg, `${SYSTEMD}.NoSuchUnit`, `Unit ${unit} not loaded.`));
      return true;
    }
    if (msg.member === 'Get') {
      const unit = unitOfPath(msg.path);
      if (!loaded.has(unit)) {
        loaded.add(unit);
        signal('UnitNew', unit);
        setImmediate(() => { loaded.delete(unit); signal('UnitRemoved', unit); }); // the stub is garbage at once
      }
      const [iface, prop] = msg.body;
      const v = { LoadState: new dbus.Variant('s', 'not-found'), ActiveState: new dbus.Variant('s', 'inactive'), InvocationID: new dbus.Variant('ay', Buffer.alloc(0)) }[prop];
      bus.send(v && iface === `${SYSTEMD}.Unit` ? dbus.Message.newMethodReturn(msg, 'v', [v]) : dbus.Message.newError(msg, 'org.freedesktop.DBus.Error.UnknownProperty', `no ${prop}`));
      return true;
    }
    bus.send(dbus.Message.newMethodReturn(msg, '', []));
    return true;
  });
  await bus.requestName(SYSTEMD, 4);
  return { bus, signal };
}

test('an ended session\'s UnitNew is read once: its unit is not loaded, and nothing sbd does loads it again', async (t) => {
  const broker = new FakeBroker();
  const systemd = await loadingSystemd(broker);
  t.after(() => systemd.bus.disconnect()); // a loop left running would keep the test alive
  const manager = await DbusUserManager.attach(await broker.connect());
  t.after(() => manager.close());
  const registry = new SessionRegistry(manager, ['sessions.slice'], undefined);
  registry.follow();
  systemd.signal('UnitNew', 'ended-1.scope'); // someone (systemctl status, say) looked at it after its end
  for (let i = 0; i < 20; i++) await settle(20);
  const calls = { ...systemd.bus.calls };
  assert.ok(calls.Get === 0, `no Get of a unit systemd has not loaded (Gets: ${calls.Get}, GetUnits: ${calls.GetUnit})`);
  assert.ok(calls.GetUnit <= 2, `read once, not again and again (GetUnits: ${calls.GetUnit})`);
  assert.deepEqual(registry.list(), []);
});
