// @ts-check
'use strict';
// Issue 12, fault 6: a process of the same user fakes systemd's UnitRemoved for a live session
// and sbd's Incident, broadcast (busctl --user emit) and sent straight to sbd's and sbctl watch's
// connections (a match rule with sender= is advice to the bus; a signal with a destination is
// delivered whatever the rules). sbd keeps watching the session: it is still in sbctl status
// and its feed still works (a real standing-still, then the raise); sbctl watch prints the real
// incidents and not the fake one.
const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const path = require('node:path');
const { spawn, spawnSync } = require('node:child_process');
const { dbus, labOnly, waitFor } = require('./helpers');
const { startSbd, incidentCollector, runSession, stopSessions, sbctl } = require('./sbd-helpers');

const root = path.resolve(__dirname, '../../..');
const { incidentToBus, INCIDENT_SIGNATURE } = require(path.join(root, 'dist/daemon/bus-types.js'));

const NAME = 'trust47';
const UNIT = `${NAME}.scope`;
const FAKE_MESSAGE = 'fake: stopping everything';
// Waits for a trigger file, then wants 200 MiB under a 64 MiB brake without swap: it stands still.
const HOG = `
import os, sys, time
while not os.path.exists(sys.argv[1]): time.sleep(0.2)
chunks = []; t0 = time.monotonic()
while len(chunks) < 200 and time.monotonic() - t0 < 120: chunks.append(b"\\x01" * (1 << 20))
time.sleep(120)
`;

/** A call to the bus itself. */
async function driver(bus, member, signature, body) {
  const reply = await bus.call(new dbus.Message({ destination: 'org.freedesktop.DBus', path: '/org/freedesktop/DBus', interface: 'org.freedesktop.DBus', member, signature, body }));
  return reply.body[0];
}

/** The unique name of the bus connection of process `pid`, or undefined. */
async function uniqueNameOf(bus, pid) {
  for (const name of await driver(bus, 'ListNames', '', [])) {
    if (!name.startsWith(':')) continue;
    try {
      if ((await driver(bus, 'GetConnectionUnixProcessID', 's', [name])) === pid) return name;
    } catch { /* gone meanwhile */ }
  }
  return undefined;
}

/** A signal of another process, sent to `destination` (or to everyone when undefined). */
function fake(bus, destination, objectPath, iface, member, signature, body) {
  const msg = dbus.Message.newSignal(objectPath, iface, member, signature, body);
  if (destination) msg.destination = destination;
  bus.send(msg);
}

test("a fake UnitRemoved does not end sbd's watch of a live session; sbctl watch prints sbd's incidents, not a fake one", labOnly, async (t) => {
  await startSbd({ detector: { graceS: 120 }, raise: { step: '256M', reserve: '256M' } });
  const inc = await incidentCollector();
  const trigger = `/var/tmp/go-${NAME}-${process.pid}`;
  const watcher = spawn(process.execPath, [path.join(root, 'dist/cli/main.js'), 'watch', '--json'], { stdio: ['ignore', 'pipe', 'pipe'] });
  let watched = '';
  watcher.stdout.on('data', (d) => { watched += d; });
  const faker = dbus.sessionBus({ busAddress: /** @type {string} */ (process.env.DBUS_SESSION_BUS_ADDRESS) });
  t.after(() => { inc.close(); watcher.kill(); faker.disconnect(); stopSessions(NAME); fs.rmSync(trigger, { force: true }); });
  const s = runSession(NAME, ['--memory-high', '64M', '--memory-max', '1G', '--swap-max', '0'], ['python3', '-c', HOG, trigger]);
  const listed = () => {
    const r = sbctl('status', NAME, '--json');
    return r.status === 0 && JSON.parse(r.stdout).sessions[0]?.unit === UNIT;
  };
  await waitFor(listed, 60_000, { what: `sbd to watch ${NAME}`, intervalMs: 500 });
  const sbdName = await driver(faker, 'GetNameOwner', 's', ['dev.sessionbrake.Manager1']);
  const watchName = await waitFor(() => uniqueNameOf(faker, watcher.pid), 60_000, { what: 'sbctl watch on the bus', intervalMs: 500 });

  // systemd's UnitRemoved for the live session, from this process: to everyone, and to sbd
  const removed = [UNIT, `/org/freedesktop/systemd1/unit/${NAME}_2escope`];
  const emitted = spawnSync('busctl', ['--user', 'emit', '/org/freedesktop/systemd1', 'org.freedesktop.systemd1.Manager', 'UnitRemoved', 'so', ...removed], { encoding: 'utf8' });
  assert.equal(emitted.status, 0, `busctl --user emit: ${emitted.stderr}`);
  fake(faker, sbdName, '/org/freedesktop/systemd1', 'org.freedesktop.systemd1.Manager', 'UnitRemoved', 'so', removed);
  // sbd's Incident, as sbd sends it, from this process: to everyone, and to sbctl watch
  const incident = incidentToBus({ type: 'will-stop', unit: UNIT, session: NAME, atMs: Date.now(), message: FAKE_MESSAGE, observeOnly: false, pids: [1] });
  for (const to of [undefined, watchName]) fake(faker, to, '/dev/sessionbrake/Manager1', 'dev.sessionbrake.Manager1', 'Incident', INCIDENT_SIGNATURE, incident);
  await new Promise((r) => setTimeout(r, 3000));
  assert.ok(listed(), `${NAME} is still in sbctl status after the fake UnitRemoved`);

  // Its feed still works: the command wedges against the brake, sbd says so and raises it.
  fs.writeFileSync(trigger, '');
  const still = await inc.wait(NAME, 'standing-still', 60_000);
  await inc.wait(NAME, 'brake-raised', 30_000);
  assert.equal(inc.of(NAME, 'will-stop').length, 0, 'the collector heard no fake either');
  const lines = () => watched.split('\n').filter((l) => l !== '').map((l) => JSON.parse(l)).filter((i) => i.session === NAME);
  await waitFor(() => lines().some((i) => i.type === 'brake-raised'), 20_000, { what: 'sbctl watch to print the raise' });
  assert.deepEqual(lines().map((i) => i.type).slice(0, 2), ['standing-still', 'brake-raised'], 'sbctl watch printed the real incidents');
  assert.equal(lines()[0].atMs, still.atMs);
  assert.ok(!watched.includes(FAKE_MESSAGE), `sbctl watch printed the fake incident:\n${watched}`);
  assert.equal(s.child.exitCode, null, 'the session still runs');
});
