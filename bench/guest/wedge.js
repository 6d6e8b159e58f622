// @ts-check
'use strict';
// In the guest, as tester: one wedge. A scope with a 64 MiB brake and no swap runs a hog that
// wants 400 MiB; prints the onset (ms since the epoch, when memory.current first reached the
// brake) and then waits until sbd logs standing-still for it (or 60 s), printing that time too.
//   node wedge.js NAME
const fs = require('node:fs');
const { spawn, spawnSync } = require('node:child_process');
const { once } = require('node:events');
const dbus = require('/mnt/proj/node_modules/dbus-next');

async function main() {
  const name = process.argv[2];
  const bus = dbus.sessionBus({ busAddress: /** @type {string} */ (process.env.DBUS_SESSION_BUS_ADDRESS) });
  const mgr = (await bus.getProxyObject('org.freedesktop.systemd1', '/org/freedesktop/systemd1')).getInterface('org.freedesktop.systemd1.Manager');
  const hog = spawn('python3', ['-c', 'import time\nc = []\nwhile len(c) < 400: c.append(b"x" * (1 << 20))\ntime.sleep(600)'], { stdio: 'ignore', detached: true });
  await once(hog, 'spawn');
  await mgr.StartTransientUnit(`${name}.scope`, 'fail', [
    ['PIDs', new dbus.Variant('au', [hog.pid])], ['Slice', new dbus.Variant('s', 'sessions.slice')],
    ['MemoryHigh', new dbus.Variant('t', 64n << 20n)], ['MemorySwapMax', new dbus.Variant('t', 0n)],
  ], []);
  const dir = `/sys/fs/cgroup/user.slice/user-1000.slice/user@1000.service/sessions.slice/${name}.scope`;
  let onset = 0;
  while (!onset) {
    try {
      if (Number(fs.readFileSync(`${dir}/memory.current`, 'utf8')) >= 64 * 2 ** 20) onset = Date.now();
    } catch { /* not yet */ }
    await new Promise((r) => setTimeout(r, 20));
  }
  let verdict = 0;
  const end = Date.now() + 60_000;
  while (!verdict && Date.now() < end) {
    await new Promise((r) => setTimeout(r, 500));
    const log = spawnSync('journalctl', ['--user', '-u', 'sbd.service', '--no-pager', '-o', 'cat', '--since', '-2min'], { encoding: 'utf8' }).stdout;
    for (const line of log.split('\n')) {
      if (line.includes('"event":"standing-still"') && line.includes(`"unit":"${name}.scope"`)) verdict = JSON.parse(line.replace(/^<\d>/, '')).atMs;
    }
  }
  console.log(`${name}\t${onset}\t${verdict || ''}`);
  spawnSync('systemctl', ['--user', 'set-property', '--runtime', `${name}.scope`, 'MemoryHigh=infinity']);
  spawnSync('systemctl', ['--user', 'stop', `${name}.scope`]);
  bus.disconnect();
}
main().catch((e) => { console.error(e); process.exit(1); });
