// @ts-check
'use strict';
// In the guest, as tester: N idle sessions (a sleep each, in its own scope of sessions.slice,
// with a 256 MiB brake), made over D-Bus in one process. The sleeps never end: a run of idle.sh
// up to 2,000 sessions outlasts an hour, and an hour's sleep would have taken the first sizes'
// sessions away before the last size was counted. Usage: node make-sessions.js N makes
// idle-N-0 ... idle-N-(N-1); node make-sessions.js N FROM makes idle-FROM ... idle-(N-1), to grow
// a set of sessions size by size.
const { spawn } = require('node:child_process');
const { once } = require('node:events');
const dbus = require('/mnt/proj/node_modules/dbus-next');

async function main() {
  const n = Number(process.argv[2]);
  const from = process.argv[3] === undefined ? undefined : Number(process.argv[3]);
  const bus = dbus.sessionBus({ busAddress: /** @type {string} */ (process.env.DBUS_SESSION_BUS_ADDRESS) });
  const mgr = (await bus.getProxyObject('org.freedesktop.systemd1', '/org/freedesktop/systemd1')).getInterface('org.freedesktop.systemd1.Manager');
  for (let i = from ?? 0; i < n; i++) {
    const child = spawn('sleep', ['infinity'], { stdio: 'ignore', detached: true });
    await once(child, 'spawn');
    child.unref();
    await mgr.StartTransientUnit(from === undefined ? `idle-${n}-${i}.scope` : `idle-${i}.scope`, 'fail', [
      ['PIDs', new dbus.Variant('au', [child.pid])],
      ['Slice', new dbus.Variant('s', 'sessions.slice')],
      ['MemoryHigh', new dbus.Variant('t', 256n << 20n)],
    ], []);
  }
  bus.disconnect();
}
main().catch((e) => { console.error(e); process.exit(1); });
