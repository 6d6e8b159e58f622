// @ts-check
'use strict';
// Shared helpers for the guest tests (test/vm/guest/*.test.js). They run INSIDE the lab guest as
// user 'tester' (uid 1000): cwd /mnt/proj, DBUS_SESSION_BUS_ADDRESS = the user bus.
const fs = require('node:fs');
const path = require('node:path');
const { spawn, execFileSync } = require('node:child_process');
const { once } = require('node:events');
const dbus = require('dbus-next');       // resolves to /mnt/proj/node_modules/dbus-next

const { Variant, Message } = dbus;

/** True inside the lab guest (the image ships this marker file). */
const inLab = fs.existsSync('/etc/sessionbrake-lab');
/** node:test option: guest tests skip themselves on any other machine. */
const labOnly = { skip: inLab ? false : 'guest-only test: run it with `npm run test:vm`' };

const SYSTEMD = 'org.freedesktop.systemd1';

/**
 * @typedef {{suite: string, debian: number, systemd: number, kernel: string}} LabGuest
 * @type {LabGuest | undefined}
 */
let guestInfo;
/**
 * Which lab guest this is, from the guest itself: suite ('bookworm' | 'trixie', /etc/os-release;
 * the suite also exports it as SB_LAB_GUEST), Debian major, systemd version (`systemctl --version`),
 * kernel release. Use it to state what differs, e.g.
 *   if (labGuest().systemd >= 254) assert.match(out, /DelegateSubgroup=/)
 * (guest/01-guests.test.js holds the differences measured so far; note that Debian's systemd 252
 * DOES take OOMPolicy= on a transient scope and honours it, measured there).
 * @returns {LabGuest}
 */
function labGuest() {
  if (guestInfo) return guestInfo;
  /** @type {Record<string, string>} */
  const osr = {};
  for (const line of fs.readFileSync('/etc/os-release', 'utf8').split('\n')) {
    const m = /^([A-Z_]+)=("?)(.*)\2$/.exec(line);
    if (m) osr[m[1]] = m[3];
  }
  const sd = Number(/^systemd (\d+)/.exec(execFileSync('systemctl', ['--version'], { encoding: 'utf8' }))?.[1]);
  guestInfo = {
    suite: osr.VERSION_CODENAME ?? process.env.SB_LAB_GUEST ?? 'unknown',
    debian: Number(osr.VERSION_ID),
    systemd: sd,
    kernel: require('node:os').release(),
  };
  return guestInfo;
}

/** Property types for the plain-object form of startScope()'s props (value -> Variant). */
const PROP_TYPES = /** @type {Record<string, string>} */ ({
  MemoryHigh: 't', MemoryMax: 't', MemoryLow: 't', MemoryMin: 't', MemorySwapMax: 't',
  CPUWeight: 't', TasksMax: 't', Description: 's', Slice: 's', CollectMode: 's',
  ManagedOOMMemoryPressure: 's', ManagedOOMSwap: 's', Delegate: 'b', SendSIGKILL: 'b',
});

/**
 * @typedef {[string, import('dbus-next').Variant]} UnitProp
 * @typedef {UnitProp[] | Record<string, string | number | bigint | boolean>} Props
 * @typedef {{unit: string, cgroupPath: string, pid: number, child: import('node:child_process').ChildProcess}} Scope
 */

/** @param {Props} props @returns {UnitProp[]} */
function toUnitProps(props) {
  if (Array.isArray(props)) return props;
  return Object.entries(props).map(([name, value]) => {
    const sig = PROP_TYPES[name];
    if (!sig) throw new Error(`startScope: unknown type of property ${name}: pass [[name, new Variant(sig, value)]]`);
    return [name, new Variant(sig, sig === 't' ? BigInt(value) : value)];
  });
}

/**
 * Connect to the user manager (systemd --user) over the user bus. Calls Subscribe() and adds ONE
 * match rule for Manager signals; JobRemoved results are collected from bus 'message' events
 * (dbus-next's removeMatch is broken, design.md §9, so no per-object proxies for signals).
 */
async function connectUserManager() {
  const busAddress = process.env.DBUS_SESSION_BUS_ADDRESS;
  if (!busAddress) throw new Error('DBUS_SESSION_BUS_ADDRESS is not set (run as `as-tester ...`)');
  const bus = dbus.sessionBus({ busAddress });   // pass it explicitly: dbus-next never looks at XDG_RUNTIME_DIR
  /** @type {Map<string, string>} job path -> result ('done', 'failed', ...) */
  const jobResults = new Map();
  /** @type {Map<string, (result: string) => void>} */
  const jobWaiters = new Map();
  bus.on('message', (msg) => {
    if (msg.type !== dbus.MessageType.SIGNAL || msg.member !== 'JobRemoved') return;
    const [, job, , result] = msg.body;        // (u id, o job, s unit, s result)
    const waiter = jobWaiters.get(job);
    if (waiter) { jobWaiters.delete(job); waiter(result); } else jobResults.set(job, result);
  });
  await bus.call(new Message({
    destination: 'org.freedesktop.DBus', path: '/org/freedesktop/DBus', interface: 'org.freedesktop.DBus',
    member: 'AddMatch', signature: 's',
    body: [`type='signal',sender='${SYSTEMD}',interface='${SYSTEMD}.Manager',member='JobRemoved'`],
  }));
  const obj = await bus.getProxyObject(SYSTEMD, '/org/freedesktop/systemd1');
  const manager = obj.getInterface(`${SYSTEMD}.Manager`);
  await manager.Subscribe();                     // systemd sends Manager signals only after this

  /** Resolve with the job's result once JobRemoved for it arrived (also if it came first). */
  function waitJob(/** @type {string} */ job, timeoutMs = 15000) {
    const early = jobResults.get(job);
    if (early !== undefined) { jobResults.delete(job); return Promise.resolve(early); }
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => { jobWaiters.delete(job); reject(new Error(`no JobRemoved for ${job} in ${timeoutMs} ms`)); }, timeoutMs);
      jobWaiters.set(job, (result) => { clearTimeout(timer); resolve(result); });
    });
  }

  /** Read a unit property, e.g. unitProperty('x.scope', 'Scope', 'ControlGroup'). */
  async function unitProperty(/** @type {string} */ unit, /** @type {string} */ iface, /** @type {string} */ prop) {
    const unitPath = await manager.GetUnit(unit);
    const props = (await bus.getProxyObject(SYSTEMD, unitPath)).getInterface('org.freedesktop.DBus.Properties');
    return (await props.Get(`${SYSTEMD}.${iface}`, prop)).value;
  }

  /**
   * Spawn argv as this user, then wrap it in a transient scope `name` with `props`
   * (array of [name, Variant] or a plain object for the common properties, see PROP_TYPES).
   * Resolves once the start job finished, with the scope's cgroup directory.
   * @param {string} name  e.g. 'sbtest-x.scope'
   * @param {Props} props
   * @param {string[]} argv
   * @returns {Promise<Scope>}
   */
  async function startScope(name, props, argv) {
    const child = spawn(argv[0], argv.slice(1), { stdio: ['ignore', 'pipe', 'pipe'] });
    await once(child, 'spawn');
    const pid = /** @type {number} */ (child.pid);
    try {
      const job = await manager.StartTransientUnit(name, 'fail',
        [['PIDs', new Variant('au', [pid])], ...toUnitProps(props)], []);
      const result = await waitJob(job);
      if (result !== 'done') throw new Error(`StartTransientUnit(${name}) job ${job} ended with '${result}'`);
      const cgroup = await unitProperty(name, 'Scope', 'ControlGroup');
      return { unit: name, cgroupPath: path.join('/sys/fs/cgroup', cgroup), pid, child };
    } catch (err) {
      child.kill('SIGKILL');
      throw err;
    }
  }

  /**
   * End a scope started by startScope() quickly: lift its MemoryHigh first (on kernel 6.1 a task
   * throttled at memory.high can take minutes to die, design.md §3), SIGKILL its process, wait for
   * the exit (bounded), then stop the unit if it is still there.
   * @param {Scope} scope
   */
  async function stopScope(scope, timeoutMs = 20000) {
    try { await manager.SetUnitProperties(scope.unit, true, [['MemoryHigh', new Variant('t', 2n ** 64n - 1n)]]); } catch { /* gone */ }
    if (scope.child.exitCode === null && scope.child.signalCode === null) {
      const exited = once(scope.child, 'exit');
      scope.child.kill('SIGKILL');
      await Promise.race([exited, new Promise((r) => setTimeout(r, timeoutMs).unref())]);
    }
    await stopUnit(scope.unit);
  }

  /** Stop a unit and wait for the stop job (ignores units that are already gone). */
  async function stopUnit(/** @type {string} */ name) {
    try { await waitJob(await manager.StopUnit(name, 'replace')); } catch (err) {
      if (!/NoSuchUnit|not loaded/.test(String(/** @type {Error} */ (err).message))) throw err;
    }
  }

  return { bus, manager, waitJob, unitProperty, startScope, stopScope, stopUnit, close: () => bus.disconnect() };
}

/**
 * Poll `predicate` until it returns something truthy (resolves with it) or time is up (rejects).
 * @template T
 * @param {() => T | Promise<T>} predicate
 * @param {number} [timeoutMs]
 * @param {{intervalMs?: number, what?: string}} [opts]
 * @returns {Promise<T>}
 */
async function waitFor(predicate, timeoutMs = 10000, { intervalMs = 100, what = 'condition' } = {}) {
  // on the monotonic clock: a test may step the wall clock (43-clock-step)
  const deadline = performance.now() + timeoutMs;
  for (;;) {
    const value = await predicate();
    if (value) return value;
    if (performance.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, intervalMs));
  }
}

/** Read a cgroup file (trimmed): readCgroupFile(scope.cgroupPath, 'memory.high'). */
function readCgroupFile(/** @type {string} */ cgroupPath, /** @type {string} */ file) {
  return fs.readFileSync(path.join(cgroupPath, file), 'utf8').trim();
}

/** Parse "key value" lines (memory.events, memory.stat, cgroup.events) into numbers. */
function parseKeyed(/** @type {string} */ text) {
  /** @type {Record<string, number>} */
  const out = {};
  for (const line of text.split('\n')) {
    const [k, v] = line.trim().split(/\s+/);
    if (k && v !== undefined) out[k] = Number(v);
  }
  return out;
}

// Memory hog: prints its pid, touches MIB MiB (1 MiB at a time) but stops at SECONDS; with HOLD=1
// it then keeps the memory until SECONDS are over. Last line: "touched N MiB in Ts".
// Under MemoryHigh without swap a hog is throttled, not killed: it only sees its deadline between
// two throttled allocations, and on kernel 6.1 its exit under the brake can take minutes. So do not
// wait for a braked hog to end by itself: end it with stopScope() (lifts the brake, then SIGKILL).
const HOG_PY = `
import os, sys, time
mib, limit, hold = int(sys.argv[1]), float(sys.argv[2]), sys.argv[3] == "1"
print(os.getpid(), flush=True)
t0 = time.monotonic(); chunks = []
while len(chunks) < mib and time.monotonic() - t0 < limit:
    chunks.append(b"\\x01" * (1 << 20))   # allocated and written: every page touched
print("touched %d MiB in %.1fs" % (len(chunks), time.monotonic() - t0), flush=True)
while hold and time.monotonic() - t0 < limit:
    time.sleep(0.1)
`;

/** argv of the hog, e.g. for startScope(name, props, hogArgv(200, 20)). */
function hogArgv(/** @type {number} */ mib, /** @type {number} */ seconds, hold = true) {
  return ['python3', '-c', HOG_PY, String(mib), String(seconds), hold ? '1' : '0'];
}

/**
 * Spawn a hog directly (no scope); resolves once it printed its pid.
 * @returns {Promise<{pid: number, child: import('node:child_process').ChildProcess, output: () => string}>}
 */
async function spawnHog(/** @type {number} */ mib, /** @type {number} */ seconds, hold = true) {
  const argv = hogArgv(mib, seconds, hold);
  // pipes, not 'inherit': a child holding the test file's stdout/stderr keeps `node --test` waiting
  const child = spawn(argv[0], argv.slice(1), { stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  /** @type {NodeJS.ReadableStream} */ (child.stdout).on('data', (d) => { out += d; });
  /** @type {NodeJS.ReadableStream} */ (child.stderr).on('data', (d) => { out += d; });
  const pid = Number(await waitFor(() => /^\d+\n/.test(out) && out.split('\n')[0], 30000, { what: 'hog pid' }));
  return { pid, child, output: () => out };
}

module.exports = {
  dbus, Variant, inLab, labOnly, labGuest, connectUserManager, waitFor, readCgroupFile, parseKeyed, hogArgv, spawnHog,
};
