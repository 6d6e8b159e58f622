// @ts-check
'use strict';
// Issue 12, fault 6: `sbctl watch` prints an Incident only when it comes from the unique name
// that owns sbd's bus name (followed when sbd restarts); another process of the user that sends
// one on sbd's path and interface is ignored. On a bus in memory (test/support/fake-bus.js);
// the real one: guest test 47-dbus-trust.
const test = require('node:test');
const assert = require('node:assert/strict');
const dbus = require('dbus-next');
const { FakeBroker, settle } = require('../../support/fake-bus');
const { exportService } = require('../../../dist/daemon/bus-service.js');
const { watchIncidents } = require('../../../dist/cli/watch.js');

const report = { service: { running: true, pid: 1, version: '0', uptimeS: 1, feed: 'none', observeOnly: false, slices: ['sessions.slice'] }, sessions: [] };
const incident = (session) => ({ type: 'will-stop', unit: `${session}.scope`, session, atMs: 1_700_000_000_000, message: 'stopping python3', observeOnly: false, pids: [3, 2] });

/** sbd on the bus, its interface exported and its name taken. */
async function startSbd(broker) {
  const bus = await broker.connect();
  return { bus, service: await exportService(bus, { health: () => report.service, sessions: () => report.sessions, slices: () => undefined }) };
}

test("sbctl watch prints sbd's incidents, not the same signal sent by another process, and follows sbd's restart", async () => {
  const broker = new FakeBroker();
  let sbd = await startSbd(broker);
  const watcher = await broker.connect();
  const faker = await broker.connect();
  /** @type {import('dbus-next').Message[]} */
  const seen = [];
  faker.on('message', (msg) => { if (msg.member === 'Incident') seen.push(msg); });
  const lines = [];
  void watchIncidents(watcher, true, (l) => lines.push(l));
  await settle();
  const replay = () => {
    const real = seen[seen.length - 1];
    faker.send(dbus.Message.newSignal(real.path ?? '', real.interface ?? '', real.member ?? '', real.signature, real.body));
  };

  sbd.service.emitIncident(incident('real1'));
  await settle();
  assert.deepEqual(lines.map((l) => JSON.parse(l).session), ['real1']);
  replay();
  await settle();
  assert.deepEqual(lines.map((l) => JSON.parse(l).session), ['real1'], "the same signal from another process is not printed");

  sbd.bus.disconnect(); // sbd restarts: its name moves to a new connection
  await settle();
  sbd = await startSbd(broker);
  sbd.service.emitIncident(incident('real2'));
  await settle();
  replay();
  await settle();
  assert.deepEqual(lines.map((l) => JSON.parse(l).session), ['real1', 'real2'], 'the restarted sbd is heard, the stranger still not');
  for (const b of [sbd.bus, watcher, faker]) b.disconnect();
});
