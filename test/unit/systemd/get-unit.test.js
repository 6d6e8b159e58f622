// @ts-check
'use strict';
// getUnit reads the properties it uses, one Get each (not GetAll of every interface: bench:unit-read
// measured 14.4 ms of dbus-next's CPU per scope so, 5.6 ms for these), on a bus in memory
// (test/support/fake-bus.js) with a fake systemd; the real one: every guest file that has sessions.
const test = require('node:test');
const assert = require('node:assert/strict');
const dbus = require('dbus-next');
const { FakeBroker } = require('../../support/fake-bus');
const { DbusUserManager } = require('../../../dist/systemd/user-manager.js');

const SYSTEMD = 'org.freedesktop.systemd1';
const id = Buffer.from('0123456789abcdef0123456789abcdef', 'hex');

/** A fake systemd answering Properties.Get from `props` ("Interface.Name" -> Variant), and
 * UnknownProperty for any other, GetUnit with NoSuchUnit for a unit `loaded` says it has not;
 * every call's member and arguments are kept. */
async function fakeSystemd(broker, props, onGet = (/** @type {number} */ n) => {}, loaded = (/** @type {string} */ unit) => true) {
  const bus = /** @type {any} */ (await broker.connect());
  bus.calls = [];
  bus.addMethodHandler((msg) => {
    bus.calls.push([msg.member, ...(msg.body ?? [])].join(' '));
    if (msg.member === 'GetUnit' && !loaded(msg.body[0])) {
      bus.send(dbus.Message.newError(msg, 'org.freedesktop.systemd1.NoSuchUnit', `Unit ${msg.body[0]} not loaded.`));
      return true;
    }
    if (msg.member === 'Get') onGet(bus.calls.filter((c) => c.startsWith('Get ')).length);
    if (msg.member === 'Get') {
      const v = props[`${msg.body[0]}.${msg.body[1]}`];
      bus.send(v ? dbus.Message.newMethodReturn(msg, 'v', [v]) : dbus.Message.newError(msg, 'org.freedesktop.DBus.Error.UnknownProperty', `no ${msg.body[1]}`));
    } else bus.send(dbus.Message.newMethodReturn(msg, '', []));
    return true;
  });
  await bus.requestName(SYSTEMD, 4);
  return bus;
}

const scope = {
  'org.freedesktop.systemd1.Unit.LoadState': new dbus.Variant('s', 'loaded'),
  'org.freedesktop.systemd1.Unit.ActiveState': new dbus.Variant('s', 'active'),
  'org.freedesktop.systemd1.Unit.InvocationID': new dbus.Variant('ay', id),
  'org.freedesktop.systemd1.Scope.ControlGroup': new dbus.Variant('s', '/user.slice/s.scope'),
  'org.freedesktop.systemd1.Scope.Slice': new dbus.Variant('s', 'sessions.slice'),
  'org.freedesktop.systemd1.Scope.MemoryHigh': new dbus.Variant('t', 64n << 20n),
  'org.freedesktop.systemd1.Scope.MemoryMax': new dbus.Variant('t', 0xffff_ffff_ffff_ffffn),
  'org.freedesktop.systemd1.Scope.MemorySwapMax': new dbus.Variant('t', 0n),
};

test('a scope: whether it is loaded (GetUnit), then the eight properties it uses, one Get each (and ActiveState, InvocationID asked again), no GetAll', async () => {
  const broker = new FakeBroker();
  const systemd = await fakeSystemd(broker, scope);
  const manager = await DbusUserManager.attach(await broker.connect());
  systemd.calls.length = 0;
  const u = await manager.getUnit('s.scope');
  assert.deepEqual(u, {
    unit: 's.scope', invocationId: id.toString('hex'), controlGroup: '/user.slice/s.scope', slice: 'sessions.slice', activeState: 'active',
    memoryHigh: 64 * 2 ** 20, memoryMax: Infinity, memorySwapMax: 0,
  });
  assert.equal(systemd.calls.length, 11);
  assert.equal(systemd.calls[0], 'GetUnit s.scope', 'first whether systemd has it loaded');
  assert.ok(systemd.calls.slice(1).every((c) => c.startsWith('Get ')), systemd.calls.join('; '));
  manager.close();
});

test('a service adds what a monitor needs; a timer reads no cgroup; a unit not found is undefined', async () => {
  const service = Object.fromEntries(Object.entries(scope).map(([k, v]) => [k.replace('.Scope.', '.Service.'), v]));
  Object.assign(service, {
    'org.freedesktop.systemd1.Service.Result': new dbus.Variant('s', 'exit-code'),
    'org.freedesktop.systemd1.Service.ExecMainCode': new dbus.Variant('i', 1),
    'org.freedesktop.systemd1.Service.ExecMainStatus': new dbus.Variant('i', 3),
    'org.freedesktop.systemd1.Service.MainPID': new dbus.Variant('u', 0),
    'org.freedesktop.systemd1.Service.NRestarts': new dbus.Variant('u', 2),
    'org.freedesktop.systemd1.Service.ExecMainStartTimestamp': new dbus.Variant('t', 1_700_000_000_000_000n),
    'org.freedesktop.systemd1.Timer.Result': new dbus.Variant('s', 'success'),
  });
  const broker = new FakeBroker();
  const systemd = await fakeSystemd(broker, service);
  const manager = await DbusUserManager.attach(await broker.connect());
  const s = await manager.getUnit('m.service');
  assert.deepEqual([s?.result, s?.execMainCode, s?.execMainStatus, s?.mainPid, s?.nRestarts, s?.mainStartedAtMs, s?.slice], ['exit-code', 1, 3, 0, 2, 1_700_000_000_000, 'sessions.slice']);
  systemd.calls.length = 0;
  const t = await manager.getUnit('m.timer');
  assert.deepEqual([t?.result, t?.controlGroup, t?.activeState], ['success', '', 'active']);
  assert.ok(!systemd.calls.some((c) => / org\.freedesktop\.systemd1\.Timer (ControlGroup|Slice|Memory)/.test(c)), 'no cgroup property asked of a timer');
  service['org.freedesktop.systemd1.Unit.LoadState'] = new dbus.Variant('s', 'not-found');
  assert.equal(await manager.getUnit('m.service'), undefined);
  manager.close();
});

test('a restart between the Gets (a new invocation after the first three) is read again, whole', async () => {
  const props = { ...scope };
  const broker = new FakeBroker();
  const newId = Buffer.from('fedcba9876543210fedcba9876543210', 'hex');
  // the 4th Get onwards sees the new invocation in a new cgroup
  const systemd = await fakeSystemd(broker, props, (n) => {
    if (n !== 4) return;
    props['org.freedesktop.systemd1.Unit.InvocationID'] = new dbus.Variant('ay', newId);
    props['org.freedesktop.systemd1.Scope.ControlGroup'] = new dbus.Variant('s', '/user.slice/s-new.scope');
  });
  const manager = await DbusUserManager.attach(await broker.connect());
  systemd.calls.length = 0;
  const u = await manager.getUnit('s.scope');
  assert.deepEqual([u?.invocationId, u?.controlGroup], [newId.toString('hex'), '/user.slice/s-new.scope']);
  assert.equal(systemd.calls.length, 21, 'GetUnit, then two whole reads');
  manager.close();
});

test("a property this systemd does not have is undefined, as GetAll left it", async () => {
  const props = { ...scope };
  delete props['org.freedesktop.systemd1.Scope.MemorySwapMax'];
  const broker = new FakeBroker();
  await fakeSystemd(broker, props);
  const manager = await DbusUserManager.attach(await broker.connect());
  assert.equal((await manager.getUnit('s.scope'))?.memorySwapMax, Infinity);
  manager.close();
});

test('getUnitLimits: the three limits of a scope, three Gets; a timer has none', async () => {
  const broker = new FakeBroker();
  const systemd = await fakeSystemd(broker, scope);
  const manager = await DbusUserManager.attach(await broker.connect());
  systemd.calls.length = 0;
  assert.deepEqual(await manager.getUnitLimits('s.scope'), { memoryHigh: 64 * 2 ** 20, memoryMax: Infinity, memorySwapMax: 0 });
  assert.deepEqual(systemd.calls.map((c) => c.split(' ').slice(1).join(' ')), ['org.freedesktop.systemd1.Scope MemoryHigh', 'org.freedesktop.systemd1.Scope MemoryMax', 'org.freedesktop.systemd1.Scope MemorySwapMax']);
  assert.equal(await manager.getUnitLimits('t.timer'), undefined);
  manager.close();
});

test('a unit systemd has not loaded is not read: GetUnit says NoSuchUnit, and no Get loads it (its UnitNew would bring the registry back to read it, without end)', async () => {
  const broker = new FakeBroker();
  const systemd = await fakeSystemd(broker, scope, undefined, (unit) => unit !== 'ended.scope');
  const manager = await DbusUserManager.attach(await broker.connect());
  systemd.calls.length = 0;
  assert.equal(await manager.getUnit('ended.scope'), undefined);
  assert.deepEqual(systemd.calls, ['GetUnit ended.scope']);
  manager.close();
});
