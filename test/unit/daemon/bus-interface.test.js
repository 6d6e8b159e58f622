// @ts-check
'use strict';
// Issue 12: sbd's interface is typed as systemd's are (no JSON inside a string), and what sbctl
// rebuilds from it is the report sbd holds, value for value. Fault 9: a brake of `infinity`
// read `null` in `sbctl status --json` (and `-` in text) when sbd answered, `infinity` when
// sbctl read systemd itself; now both say "infinity". On a bus in memory (test/support/fake-bus.js).
const test = require('node:test');
const assert = require('node:assert/strict');
const dbus = require('dbus-next');
const { FakeBroker, settle } = require('../../support/fake-bus');
const { exportService } = require('../../../dist/daemon/bus-service.js');
const { queryService, renderStatus } = require('../../../dist/cli/status.js');
const { watchIncidents, formatIncident } = require('../../../dist/cli/watch.js');

const MiB = 2 ** 20;
const unbraked = {
  name: 'free', unit: 'free.scope', state: 'ok', deadlineS: null, lastAction: null, feed: 'sampling (no PSI)',
  currentBytes: 5 * MiB, highBytes: Infinity, maxBytes: Infinity, swapMaxBytes: Infinity,
  anonShare: 0.25, pressureFullAvg10: null, processes: 0, biggest: null, heartbeatAgeS: null,
};
const braked = {
  name: 'wedged', unit: 'wedged.scope', state: 'standing-still', deadlineS: 87.123, lastAction: '12:00:01 standing-still: standing still against its own brake', feed: 'psi',
  currentBytes: 64 * MiB, highBytes: 64 * MiB, maxBytes: 1024 * MiB, swapMaxBytes: 0,
  anonShare: 0.97, pressureFullAvg10: 0.4477, processes: 5, biggest: { name: 'python3', pid: 4242, rssBytes: 60 * MiB }, heartbeatAgeS: 12.5,
};
const slice = {
  slice: 'nbr.slice', state: 'standing-still', cause: 'slice-brake', currentBytes: 320 * MiB, highBytes: 320 * MiB, maxBytes: Infinity, memAvailableBytes: 1024 * MiB,
  members: [{ path: 'a.scope', currentBytes: 180 * MiB, growthBytes: -3 * MiB, fairShareBytes: 320 * MiB / 3 }, { path: 'b.scope', currentBytes: 140 * MiB, growthBytes: 140 * MiB, fairShareBytes: 320 * MiB / 3 }],
  culprit: { path: 'b.scope', rule: 'grew-most', why: 'b.scope grew most' }, deadlineS: 8, lastAction: null, feed: 'psi',
};
const quietSlice = { ...slice, slice: 'q.slice', state: 'ok', cause: null, culprit: null, deadlineS: null, members: [] };
const service = { running: true, pid: 4711, version: '0.1.0', uptimeS: 75.25, feed: 'psi', observeOnly: false, slices: ['sessions.slice', 'nbr.slice'] };

async function sbdWith(report) {
  const broker = new FakeBroker();
  const sbd = await broker.connect();
  const bus = await exportService(sbd, { health: () => report.service, sessions: () => report.sessions, slices: () => report.slices });
  return { broker, sbd, bus, client: await broker.connect() };
}

test("sbctl status: sbd's report arrives as sbd holds it (an unlimited brake stays unlimited)", async () => {
  const report = { service, sessions: [unbraked, braked], slices: [slice, quietSlice] };
  const { sbd, client } = await sbdWith(report);
  const got = await queryService(client);
  assert.deepEqual(got, report);
  assert.equal(renderStatus(/** @type {any} */ (got), true), renderStatus(/** @type {any} */ (report), true), 'JSON the same as sbctl built alone');
  assert.equal(renderStatus(/** @type {any} */ (got), false), renderStatus(/** @type {any} */ (report), false), 'text the same');
  const json = JSON.parse(renderStatus(/** @type {any} */ (got), true));
  assert.equal(json.sessions[0].highBytes, 'infinity');
  assert.equal(json.sessions[0].maxBytes, 'infinity');
  assert.equal(json.slices[0].maxBytes, 'infinity');
  assert.match(renderStatus(/** @type {any} */ (got), false).split('\n').find((l) => l.startsWith('free ')) ?? '', /^free\s+ok\s+5\.00M\s+infinity\s+infinity\s/);
  sbd.disconnect();
  client.disconnect();
});

test('sbctl status: without slice arbitration the report has no slices, as sbctl alone builds it', async () => {
  const report = { service: { ...service, observeOnly: true, feed: 'none' }, sessions: [] };
  const { sbd, client } = await sbdWith({ ...report, slices: undefined });
  assert.deepEqual(await queryService(client), report);
  sbd.disconnect();
  client.disconnect();
});

test('GetStatus: sbd\'s health is of the instant the sessions are listed, not of after their figures were read (CI 60-adopt: part of the sessions, said adopted)', async () => {
  // sbd still adopting as the sessions are listed; the adoption ends while their figures are read
  let adopting = /** @type {{ adopted: number, listed: number } | undefined} */ ({ adopted: 1, listed: 2 });
  const source = {
    health: () => ({ ...service, ...(adopting ? { adopting: { ...adopting } } : {}) }),
    sessions: async () => {
      const listed = [unbraked];
      await new Promise((resolve) => setImmediate(resolve));
      adopting = undefined;
      return listed;
    },
    slices: () => undefined,
  };
  const broker = new FakeBroker();
  const sbd = await broker.connect();
  await exportService(sbd, source);
  const client = await broker.connect();
  const got = await queryService(client);
  assert.deepEqual(got?.service.adopting, { adopted: 1, listed: 2 }, 'the report of one session of two says adopting');
  assert.equal(got?.sessions.length, 1);
  sbd.disconnect();
  client.disconnect();
});

test('sbctl status of an sbd without GetStatus (older than issue 15): its typed properties and lists, the same report but the figures\' age', async () => {
  const report = { service, sessions: [unbraked, braked], slices: [slice, quietSlice] };
  let asked = 0;
  // the first sessions() is GetStatus's: answered as an sbd that has no such method
  const { sbd, client } = await sbdWith({ ...report, get sessions() { if (asked++ === 0) throw new dbus.DBusError('org.freedesktop.DBus.Error.UnknownMethod', 'Method "GetStatus" with signature "" on interface "dev.sessionbrake.Manager1" doesn\'t exist'); return report.sessions; } });
  const got = await queryService(client);
  assert.equal(asked, 2, 'GetStatus, then ListSessions');
  assert.deepEqual(got, { ...report, sessions: report.sessions.map((r) => ({ ...r, sampleAgeS: null })) });
  sbd.disconnect();
  client.disconnect();
});

test('the interface is typed: properties and arrays of structs, no JSON in a string', async () => {
  const { sbd, client } = await sbdWith({ service, sessions: [braked], slices: [slice] });
  const call = (iface, member, signature = '', body = []) => client.call(new dbus.Message({ destination: 'dev.sessionbrake.Manager1', path: '/dev/sessionbrake/Manager1', interface: iface, member, signature, body }));
  const props = (await call('org.freedesktop.DBus.Properties', 'GetAll', 's', ['dev.sessionbrake.Manager1'])).body[0];
  assert.deepEqual(Object.fromEntries(Object.entries(props).map(([k, v]) => [k, v.signature])), { Version: 's', Pid: 'u', UptimeUSec: 't', Feed: 's', ObserveOnly: 'b', Slices: 'as', ArbitratesSlices: 'b', Adopting: 'ai' });
  assert.equal(props.UptimeUSec.value, 75_250_000n);
  const sessions = await call('dev.sessionbrake.Manager1', 'ListSessions');
  assert.equal(sessions.signature, 'a(ssstssttttddu(sut)t)');
  assert.equal(sessions.body[0][0][6], 64n * 2n ** 20n, 'MemoryHigh in bytes, as uint64');
  const slices = await call('dev.sessionbrake.Manager1', 'ListSlices');
  assert.equal(slices.signature, 'a(ssstttta(stxd)(sss)tss)');
  await assert.rejects(call('dev.sessionbrake.Manager1', 'Status'), /UnknownMethod|does not exist/, 'the JSON method is gone');
  sbd.disconnect();
  client.disconnect();
});

test('sbctl watch: an incident arrives with typed arguments and its figures, as sbd told it', async () => {
  const { sbd, bus, client, broker } = await sbdWith({ service, sessions: [] });
  const spy = await broker.connect();
  const signals = [];
  spy.on('message', (m) => { if (m.member === 'Incident') signals.push(m); });
  const json = [];
  const text = [];
  void watchIncidents(client, true, (l) => json.push(l));
  const textWatcher = await broker.connect();
  void watchIncidents(textWatcher, false, (l) => text.push(l));
  await settle();
  const incident = {
    type: 'subtree-stopped', unit: 'w.scope', session: 'w', atMs: 1_764_500_000_123, message: 'stopped python3: 2 by SIGTERM, 0 by SIGKILL', observeOnly: false,
    name: 'python3', pids: [12, 11], rssBytes: 60 * MiB, sparedGit: [], share: 0.44, evidence: ['own-high-moved'], fromBytes: Infinity,
    procs: [{ pid: 12, program: 'python3', outcome: 'terminated' }], nothing: undefined,
  };
  bus.emitIncident(/** @type {any} */ (incident));
  await settle();
  assert.equal(signals[0].signature, 'ssstsba{sv}');
  assert.equal(signals[0].body[3], 1_764_500_000_123_000n, 'wall-clock µs');
  const { nothing, ...told } = incident;
  void nothing;
  assert.deepEqual(JSON.parse(json[0]), { ...told, fromBytes: 'infinity' });
  assert.deepEqual(text, [formatIncident(/** @type {any} */ (told))]);
  for (const b of [sbd, client, spy, textWatcher]) b.disconnect();
});
