// @ts-check
'use strict';
// In the guest, as tester: N sessions (scopes of storm.slice made over D-Bus, as storm.js does:
// one node process instead of N `sbctl run`, which under TCG cost minutes to start) under one
// collective brake, GREEDY of them the stand-in agent (test/vm/guest/fixtures/agent.py, whose
// build wants 800 MiB: more than the slice has left even alone), the rest innocent (each holds
// 20 MiB and keeps touching 4 MiB). Reads the slice's memory.current every 100 ms and prints each
// onset (ms since the epoch when it reached 95 % of the brake from below: the slice starts
// standing still), then waits until every greedy build is gone or TIMEOUT_S passed. Prints,
// tab-separated:
//   onset  MS                      one line per onset
//   session NAME KIND PIDS_JSON    one line per session (KIND greedy|innocent)
//   node slice-storm.js N GREEDY BRAKE_MIB TIMEOUT_S
const fs = require('node:fs');
const { spawn } = require('node:child_process');
const { once } = require('node:events');
const readline = require('node:readline');
const dbus = require('/mnt/proj/node_modules/dbus-next');

const SLICE = '/sys/fs/cgroup/user.slice/user-1000.slice/user@1000.service/storm.slice';
const INNOCENT = `import json, mmap, os, time
k = [b"\\x01" * (1 << 20) for _ in range(20)]
print(json.dumps({"pid": os.getpid()}), flush=True)
while True:
    m = mmap.mmap(-1, 4 << 20)
    for o in range(0, 4 << 20, 4096): m[o] = 1
    m.close(); time.sleep(0.05)
`;
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const alive = (pid) => { try { return !/^\d+ \(.*\) Z/.test(fs.readFileSync(`/proc/${pid}/stat`, 'utf8')); } catch { return false; } };
/** Progress for whoever watches the share ($LAB_OUT is on the host while the guest runs). */
const progress = (msg) => {
  try {
    fs.appendFileSync(`${process.env.LAB_OUT ?? '/tmp'}/slice-storm.progress`, `${new Date().toISOString()} ${msg}\n`);
  } catch {
    /* the share refused (9p and ownership): progress is a convenience, the results are not */
  }
};

async function main() {
  const [n, greedy, brakeMib, timeoutS] = process.argv.slice(2).map(Number);
  const brake = brakeMib * 2 ** 20;
  const bus = dbus.sessionBus({ busAddress: /** @type {string} */ (process.env.DBUS_SESSION_BUS_ADDRESS) });
  const mgr = (await bus.getProxyObject('org.freedesktop.systemd1', '/org/freedesktop/systemd1')).getInterface('org.freedesktop.systemd1.Manager');
  /** Start argv in a new scope NAME of storm.slice; resolves with the first line it prints (JSON). */
  async function session(name, argv) {
    const child = spawn(argv[0], argv.slice(1), { stdio: ['ignore', 'pipe', 'ignore'], detached: true, env: { ...process.env, SESSIONBRAKE_SESSION: name } });
    await once(child, 'spawn');
    child.unref();
    const first = new Promise((resolve) => readline.createInterface({ input: /** @type {any} */ (child.stdout) }).once('line', (l) => resolve(JSON.parse(l))));
    await mgr.StartTransientUnit(`${name}.scope`, 'fail', [
      ['PIDs', new dbus.Variant('au', [child.pid])], ['Slice', new dbus.Variant('s', 'storm.slice')],
      ['MemoryHigh', new dbus.Variant('t', 4n << 30n)], ['MemorySwapMax', new dbus.Variant('t', 0n)],
    ], []);
    return first;
  }
  const sessions = [];
  // the innocents first, so the slice is full of honest work when the greedy ones start
  for (let i = 0; i < n - greedy; i++) sessions.push({ name: `inn-${i}`, kind: 'innocent', pids: await session(`inn-${i}`, ['python3', '-c', INNOCENT]) });
  progress(`${n - greedy} innocent started`);
  await sleep(5000); // sbd adopts them and notes the slice's members (the culprit's baseline)
  const starts = [];
  for (let i = 0; i < greedy; i++) starts.push(session(`greedy-${i}`, ['python3', '/mnt/proj/test/vm/guest/fixtures/agent.py', '800', '600']).then((pids) => sessions.push({ name: `greedy-${i}`, kind: 'greedy', pids })));
  await Promise.all(starts);
  bus.disconnect();
  progress(`${greedy} greedy started`);
  const end = Date.now() + timeoutS * 1000;
  let above = false;
  let left = greedy;
  while (Date.now() < end) {
    const cur = Number(fs.readFileSync(`${SLICE}/memory.current`, 'utf8'));
    if (!above && cur >= 0.95 * brake) {
      console.log(`onset\t${Date.now()}`);
      progress(`slice onset at ${Math.round(cur / 2 ** 20)} MiB`);
    }
    above = cur >= 0.95 * brake;
    const now = sessions.filter((s) => s.kind === 'greedy' && alive(s.pids.hog)).length;
    if (now !== left) progress(`${now} greedy builds left`);
    left = now;
    if (left === 0) break;
    await sleep(100);
  }
  for (const s of sessions) console.log(['session', s.name, s.kind, JSON.stringify(s.pids)].join('\t'));
  // the sessions' stdout pipes would keep this process alive as long as they run
  process.stdout.write('', () => process.exit(0));
}
main().catch((e) => {
  console.error(e);
  process.exit(1);
});
