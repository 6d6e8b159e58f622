// @ts-check
'use strict';
// Issue 13: expiresAt for every type and heartbeats, on the monotonic clock (monitor/timers.ts
// over the manager and a fake systemd): expired once at its time, a wall-clock step (while sbd
// runs, or while it is down) moves nothing, a wait beyond setTimeout's range is not cut short, a
// spawn is saved expired before its unit is stopped (no exit told); heartbeats every period,
// skipped after another notice of the monitor.
const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const path = require('node:path');
const { MonitorManager } = require('../../../dist/monitor/manager.js');
const { MonitorTimers } = require('../../../dist/monitor/timers.js');
const { recoverMonitors } = require('../../../dist/daemon/monitors.js');
const { bootId } = require('../../../dist/util/clock.js');
const { fakeClocks } = require('../../support/clocks');
const { fakeMonitorHost } = require('../../support/monitor-host');

const MIN = 60_000;
const DAY = 24 * 60 * MIN;

function setup(t) {
  const clocks = fakeClocks(t);
  t.mock.timers.enable({ apis: ['setTimeout'] });
  const f = fakeMonitorHost(t, { monotonicMs: () => clocks.monoMs() });
  const make = () => {
    const m = new MonitorManager(f.host);
    new MonitorTimers(m, { monotonicMs: () => clocks.monoMs(), bootId });
    t.after(() => m.close());
    return m;
  };
  const m = make();
  /** true time passes: both clocks, and the timers due meanwhile fire */
  const advance = async (ms) => {
    clocks.advance(ms);
    t.mock.timers.tick(ms);
    for (let i = 0; i < 5; i++) await new Promise(setImmediate);
  };
  return { ...f, m, make, clocks, advance };
}

/** What sbd does at start: load the records (startMonitors), recover them after adoption (recoverMonitors), on a registry that knows "fix". */
async function restart(s) {
  const m = s.make();
  m.loadAll();
  await recoverMonitors(m, { registry: { get: (id) => s.host.session(id) }, manager: { getUnit: s.host.getUnit }, log: { info: () => {}, warn: () => {} } });
  return m;
}

const iso = (ms) => new Date(ms).toISOString();
const kinds = (s) => s.notices.map((n) => n.kind);

test('a tail expires at its expiresAt: saved expired, unwatched, told once', async (t) => {
  const s = setup(t);
  const a = await s.m.start('fix', { type: 'tail', path: path.join(s.dir, 'a.log'), label: 'log', expiresAt: iso(Date.now() + 60_000) });
  await s.advance(59_000);
  assert.equal(s.m.get(a.id)?.lifecycle, 'running');
  await s.advance(2_000);
  assert.equal(s.m.get(a.id)?.lifecycle, 'expired');
  assert.ok((s.m.get(a.id)?.endedAtMs ?? 0) >= Date.parse(s.m.get(a.id)?.spec.expiresAt ?? ''));
  await s.advance(60_000);
  assert.deepEqual(s.notices.map((n) => [n.kind, n.text]), [['expired', `log: its expiresAt (${s.m.get(a.id)?.spec.expiresAt}) has passed: stopped`]]);
});

test('a wall-clock step while sbd runs moves nothing: the time left was read once', async (t) => {
  const s = setup(t);
  const a = await s.m.start('fix', { type: 'tail', path: path.join(s.dir, 'a.log'), expiresAt: iso(Date.now() + 60_000) });
  s.clocks.stepWall(3_600_000); // an hour forward (NTP, date -s)
  await s.advance(30_000);
  assert.equal(s.m.get(a.id)?.lifecycle, 'running', 'not ended early');
  s.clocks.stepWall(-7_200_000); // and two back
  await s.advance(31_000);
  assert.equal(s.m.get(a.id)?.lifecycle, 'expired', 'not ended late');
});

test('a wall-clock step while sbd is down moves nothing on the same boot: the monotonic deadline is on record', async (t) => {
  const s = setup(t);
  const a = await s.m.start('fix', { type: 'tail', path: path.join(s.dir, 'a.log'), expiresAt: iso(Date.now() + 10 * MIN) });
  assert.equal(s.m.get(a.id)?.expiry?.bootId, bootId());
  s.m.close();
  await s.advance(MIN);
  s.clocks.stepWall(3_600_000); // an hour forward while sbd was down: by the wall clock it has expired
  const m2 = await restart(s);
  assert.equal(m2.get(a.id)?.lifecycle, 'running', 'resumed, not expired: 9 min are left on the monotonic clock');
  assert.equal(m2.get(a.id)?.owner.busName, ':1.7');
  await s.advance(8 * MIN);
  assert.equal(m2.get(a.id)?.lifecycle, 'running');
  await s.advance(2 * MIN);
  assert.equal(m2.get(a.id)?.lifecycle, 'expired');
  assert.equal(s.notices.filter((n) => n.kind === 'expired').length, 1);
});

test('saved on another boot: the time left is read from the wall clock again', async (t) => {
  const s = setup(t);
  const a = await s.m.start('fix', { type: 'tail', path: path.join(s.dir, 'a.log'), expiresAt: iso(Date.now() + 10 * MIN) });
  s.m.patch(a.id, { expiry: { bootId: 'another-boot', atMonoMs: 1 } }); // monotonic times of another boot mean nothing here
  s.m.close();
  const m2 = await restart(s);
  assert.equal(m2.get(a.id)?.lifecycle, 'running');
  assert.equal(m2.get(a.id)?.expiry?.bootId, bootId(), 'kept anew for this boot');
  await s.advance(9 * MIN);
  assert.equal(m2.get(a.id)?.lifecycle, 'running');
  await s.advance(2 * MIN);
  assert.equal(m2.get(a.id)?.lifecycle, 'expired');
});

test('an expiry beyond setTimeout\'s range (24.8 days) is not cut short', async (t) => {
  const s = setup(t);
  const a = await s.m.start('fix', { type: 'tail', path: path.join(s.dir, 'a.log'), expiresAt: iso(Date.now() + 30 * DAY) });
  await s.advance(1000);
  assert.equal(s.m.get(a.id)?.lifecycle, 'running');
  await s.advance(29 * DAY);
  assert.equal(s.m.get(a.id)?.lifecycle, 'running');
  await s.advance(DAY);
  assert.equal(s.m.get(a.id)?.lifecycle, 'expired');
});

test('a spawn: saved expired before its unit is stopped, so the unit\'s end is not told as an exit', async (t) => {
  const s = setup(t);
  /** @type {string[]} */
  const atStop = [];
  const a = await s.m.start('fix', { type: 'spawn', argv: ['sleep', '1000'], label: 'job', expiresAt: iso(Date.now() + 60_000) });
  const unit = `sb-monitor-${a.id}.service`;
  const stopUnit = s.host.stopUnit;
  s.host.stopUnit = async (name) => { atStop.push(s.m.get(a.id)?.lifecycle ?? '-'); await stopUnit(name); await s.m.onUnit(name); };
  await s.advance(61_000);
  assert.deepEqual(atStop, ['expired']);
  assert.equal(s.units.get(unit).activeState, 'inactive');
  assert.deepEqual(kinds(s), ['expired']);
});

test('heartbeats: every period, what it saw; skipped when another notice went out within the period; none once stopped', async (t) => {
  const s = setup(t);
  const log = path.join(s.dir, 'hb.log');
  fs.writeFileSync(log, '');
  const a = await s.m.start('fix', { type: 'tail', path: log, label: 'hb', heartbeatMinutes: 1, notifyOn: ['ERROR'], coalesceSeconds: 0 });
  await s.advance(60_000);
  assert.deepEqual(s.notices.map((n) => [n.kind, n.text]), [['heartbeat', 'hb: alive: 0 ticks; no output line seen yet']]);
  await s.advance(10_000); // 70 s: a match is told
  fs.appendFileSync(log, 'ERROR one\nok two\n');
  s.m.onFile(log);
  await s.advance(1);
  assert.deepEqual(kinds(s), ['heartbeat', 'match']);
  await s.advance(50_000); // 120 s: the match went out 50 s ago, within the period: no heartbeat
  assert.deepEqual(kinds(s), ['heartbeat', 'match']);
  await s.advance(10_000); // 130 s: a period after the match
  assert.deepEqual(kinds(s), ['heartbeat', 'match', 'heartbeat']);
  assert.equal(s.notices.at(-1).text, 'hb: alive: 1 tick; last line: "ok two"');
  await s.m.stop('fix', a.handle);
  await s.advance(10 * MIN);
  assert.equal(s.notices.length, 3);
});
