// @ts-check
'use strict';
// Helpers for the guest tests that need sbd running: its config, (re)starting it as a user
// unit, its incidents collected from the D-Bus Incident signal, and sbctl.
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { spawn, spawnSync } = require('node:child_process');
const dbus = require('dbus-next');
const { waitFor } = require('./helpers');

const root = path.resolve(__dirname, '../../..');
const { incidentFromBus } = require(path.join(root, 'dist/daemon/bus-types.js'));
const { followNameOwner } = require(path.join(root, 'dist/systemd/name-owner.js'));

const SBCTL = path.join(root, 'dist/cli/main.js');
const SLICE_DIR = '/sys/fs/cgroup/user.slice/user-1000.slice/user@1000.service/sessions.slice';

function systemctl(...args) {
  return spawnSync('systemctl', ['--user', ...args], { encoding: 'utf8' });
}
function sbctl(...args) {
  return spawnSync(process.execPath, [SBCTL, ...args], { encoding: 'utf8', timeout: 60_000 });
}

/** Write sbd's config and (re)start it; resolves once it answers Status(). */
async function startSbd(config) {
  const dir = path.join(os.homedir(), '.config', 'sessionbrake');
  fs.mkdirSync(dir, { recursive: true });
  fs.writeFileSync(path.join(dir, 'config.json'), JSON.stringify(config));
  if (!fs.existsSync(path.join(os.homedir(), '.config/systemd/user/sbd.service'))) {
    const r = sbctl('install');
    if (r.status !== 0) throw new Error(`sbctl install: ${r.stderr}`);
  }
  const r = systemctl('restart', 'sbd.service');
  if (r.status !== 0) throw new Error(`systemctl --user restart sbd: ${r.stderr}`);
  await waitFor(() => sbctl('status', '--json').status === 0, 30_000, { what: 'sbd to answer' });
}

/** Collects sbd's incidents from the bus for the life of the test: its typed Incident signal,
 * from the unique name that owns sbd's bus name only (followed across restarts), as sbctl watch. */
async function incidentCollector() {
  const bus = dbus.sessionBus({ busAddress: /** @type {string} */ (process.env.DBUS_SESSION_BUS_ADDRESS) });
  const sbdName = followNameOwner(bus, 'dev.sessionbrake.Manager1');
  await sbdName.start();
  /** @type {Array<any>} */
  const incidents = [];
  bus.on('message', (msg) => {
    if (msg.type === dbus.MessageType.SIGNAL && msg.member === 'Incident' && msg.interface === 'dev.sessionbrake.Manager1' && sbdName.sent(msg)) {
      incidents.push({ ...incidentFromBus(/** @type {any} */ (msg.body)), receivedAtMs: Date.now(), receivedMonoMs: performance.now(), sender: msg.sender });
    }
  });
  await bus.call(new dbus.Message({
    destination: 'org.freedesktop.DBus', path: '/org/freedesktop/DBus', interface: 'org.freedesktop.DBus', member: 'AddMatch', signature: 's',
    body: ["type='signal',sender='dev.sessionbrake.Manager1',interface='dev.sessionbrake.Manager1',member='Incident'"],
  }));
  return {
    incidents,
    of: (session, type) => incidents.filter((i) => i.session === session && (type === undefined || i.type === type)),
    wait: (session, type, timeoutMs = 60_000) =>
      waitFor(() => incidents.find((i) => i.session === session && i.type === type), timeoutMs, { what: `incident ${type} of ${session}` }),
    close: () => bus.disconnect(),
  };
}

/**
 * `sbctl run --name NAME [opts] -- argv` in the background; its output is collected.
 * @returns {{child: import('node:child_process').ChildProcess, output: () => string}}
 */
function runSession(name, opts, argv) {
  const child = spawn(process.execPath, [SBCTL, 'run', '--name', name, ...opts, '--', ...argv], { stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  child.stdout?.on('data', (d) => { out += d; });
  child.stderr?.on('data', (d) => { out += d; });
  return { child, output: () => out };
}

/**
 * The agent fixture (fixtures/agent.py: an agent, an MCP server, git and a build wanting MIB)
 * as session NAME (by default under a 64 MiB brake without swap; RUNOPTS: other sbctl run
 * options); resolves with the pids it reports.
 */
async function startAgent(name, mib, seconds, runOpts = ['--memory-high', '64M', '--memory-max', '1G', '--swap-max', '0']) {
  const s = runSession(name, runOpts, ['python3', path.join(__dirname, 'fixtures/agent.py'), String(mib), String(seconds)]);
  try {
    const pids = await waitFor(() => {
      const line = s.output().split('\n').find((l) => l.startsWith('{"agent"'));
      return line && JSON.parse(line);
      // 120 s: `sbctl run` and python's start beside 100 idle sessions on a loaded host took over
      // 60 s (60-adopt on Debian 13, three guests on two cores)
    }, 120_000, { what: `the agent of ${name} to report its pids` });
    return { ...s, pids };
  } catch (err) {
    const ended = s.child.exitCode ?? s.child.signalCode;
    throw new Error(`${/** @type {Error} */ (err).message}; sbctl run ${ended === null ? 'still runs' : `ended (${ended})`}; its output:\n${s.output() || '(none)'}`);
  }
}

/** Stop sessions by unit and wait for their sbctl to end (the brake lifted first: throttled hogs die slowly). */
function stopSessions(...names) {
  for (const n of names) systemctl('set-property', '--runtime', `${n}.scope`, 'MemoryHigh=infinity');
  systemctl('stop', ...names.map((n) => `${n}.scope`));
}

/** A session's cgroup directory. */
const cgroupOf = (name) => path.join(SLICE_DIR, `${name}.scope`);

/** Is the process alive (and not a zombie)? */
function alive(pid) {
  try {
    return !/\) Z /.test(fs.readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return false;
  }
}

module.exports = { startSbd, incidentCollector, runSession, startAgent, stopSessions, cgroupOf, alive, sbctl, systemctl, SLICE_DIR };
