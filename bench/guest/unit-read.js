// @ts-check
'use strict';
// In the guest, as tester: what reading a unit costs sbd over D-Bus, by the shape of the read
// (bench/unit-read.js). N scopes (a sleep each in sessions.slice), then ROUNDS rounds per shape of
// reading all N, 16 in flight (as the registry adopts), through dbus-next raw Messages as sbd's
// getUnit does. Prints per shape: CPU ms of this process per unit read (user+system: dbus-next's
// marshalling and decoding; sbd is one such process) and wall ms per unit.
//   node unit-read.js N ROUNDS
const { spawn } = require('node:child_process');
const { once } = require('node:events');
const dbus = require('/mnt/proj/node_modules/dbus-next');

const SYSTEMD = 'org.freedesktop.systemd1';
const PROPS = 'org.freedesktop.DBus.Properties';
/** What sbd's getUnit needs of a scope (src/systemd/user-manager.ts). */
const NEEDED = [['org.freedesktop.systemd1.Unit', ['LoadState', 'ActiveState', 'InvocationID']], ['org.freedesktop.systemd1.Scope', ['ControlGroup', 'Slice', 'MemoryHigh', 'MemoryMax', 'MemorySwapMax']]];

/** @param {string} unit */
const objectPath = (unit) => `/org/freedesktop/systemd1/unit/${unit.replace(/[^A-Za-z0-9]/g, (c) => `_${c.charCodeAt(0).toString(16).padStart(2, '0')}`)}`;

async function main() {
  const n = Number(process.argv[2] ?? 200);
  const rounds = Number(process.argv[3] ?? 3);
  const bus = dbus.sessionBus({ busAddress: /** @type {string} */ (process.env.DBUS_SESSION_BUS_ADDRESS) });
  /** @param {string} path @param {string} member @param {string} signature @param {unknown[]} body */
  const call = async (path, member, signature, body) => bus.call(new dbus.Message({ destination: SYSTEMD, path, interface: PROPS, member, signature, body }));
  const mgr = (await bus.getProxyObject(SYSTEMD, '/org/freedesktop/systemd1')).getInterface('org.freedesktop.systemd1.Manager');
  const units = [];
  for (let i = 0; i < n; i++) {
    const child = spawn('sleep', ['infinity'], { stdio: 'ignore', detached: true });
    await once(child, 'spawn');
    child.unref();
    const unit = `unitread-${i}.scope`;
    await mgr.StartTransientUnit(unit, 'fail', [['PIDs', new dbus.Variant('au', [child.pid])], ['Slice', new dbus.Variant('s', 'sessions.slice')], ['MemoryHigh', new dbus.Variant('t', 256n << 20n)]], []);
    units.push(unit);
  }
  /** @type {Record<string, (unit: string) => Promise<void>>} */
  const shapes = {
    "GetAll('') (sbd's getUnit before session 11)": async (u) => { await call(objectPath(u), 'GetAll', 's', ['']); },
    'GetAll(Unit) + GetAll(Scope)': async (u) => { for (const [iface] of NEEDED) await call(objectPath(u), 'GetAll', 's', [iface]); },
    'Get x 8, in parallel (getUnit asks 10 in two rounds)': async (u) => { await Promise.all(NEEDED.flatMap(([iface, names]) => /** @type {string[]} */ (names).map((p) => call(objectPath(u), 'Get', 'ss', [iface, p])))); },
  };
  console.log('shape\tunits_read\tcpu_ms_per_unit\twall_ms_per_unit');
  for (const [name, read] of Object.entries(shapes)) {
    await Promise.all(units.slice(0, 16).map(read)); // warm
    const c0 = process.cpuUsage();
    const t0 = process.hrtime.bigint();
    for (let r = 0; r < rounds; r++) {
      let next = 0;
      const worker = async () => { while (next < units.length) await read(/** @type {string} */ (units[next++])); };
      await Promise.all(Array.from({ length: 16 }, worker));
    }
    const wall = Number(process.hrtime.bigint() - t0) / 1e6;
    const c = process.cpuUsage(c0);
    const reads = rounds * units.length;
    console.log([name, reads, ((c.user + c.system) / 1000 / reads).toFixed(2), (wall / reads).toFixed(2)].join('\t'));
  }
  for (const u of units) await mgr.StopUnit(u, 'replace').catch(() => {});
  bus.disconnect();
}
main().catch((e) => { console.error(e); process.exit(1); });
