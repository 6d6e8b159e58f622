// @ts-check
'use strict';
// Issue 13: the lifecycle commands over the manager and a fake systemd: recover (what waits),
// approve (a quarantined spawn: its failed unit reset, then a fresh start; a poll quarantined for
// its work never), reject (stopped, reset, archived), stop --all (this session's only), inspect
// (the receipt, with systemd's main pid), gc (corrupt, orphans, finished past the retention; a
// detached unit still running kept). The real systemd is the guest's (55-monitor-restart).
const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const path = require('node:path');
const { MonitorManager } = require('../../../dist/monitor/manager.js');
const { approve, reject, stopAll, stoppable, inspect, collect, waitingMonitors } = require('../../../dist/monitor/lifecycle.js');
const { FINISHED_RETENTION_MS } = require('../../../dist/monitor/gc.js');
const { fakeMonitorHost } = require('../../support/monitor-host');

function setup(t) {
  const f = fakeMonitorHost(t);
  const m = new MonitorManager(f.host);
  t.after(() => m.close());
  return { ...f, m };
}

/** A spawn whose unit crash-looped: systemd left it failed at its start limit. */
async function quarantinedSpawn(s, label = 'crashy') {
  const a = await s.m.start('fix', { type: 'spawn', argv: ['node', 'crash.js'], label });
  const unit = `sb-monitor-${a.id}.service`;
  s.units.set(unit, { ...s.units.get(unit), activeState: 'failed', result: 'exit-code', execMainCode: 1, execMainStatus: 3, nRestarts: 3, mainPid: 0 });
  await s.m.onUnit(unit);
  assert.equal(s.m.get(a.id)?.lifecycle, 'quarantined');
  return { ...a, unit };
}

test('recover lists what waits; approve resets the failed unit, then starts it afresh', async (t) => {
  const s = setup(t);
  const q = await quarantinedSpawn(s);
  await s.m.start('fix', { type: 'tail', path: path.join(s.dir, 'a.log') });
  assert.deepEqual(waitingMonitors(s.m, 'fix').map((w) => [w.handle, w.lifecycle]), [[q.handle, 'quarantined']]);
  const before = s.units.get(q.unit).invocationId;
  s.calls.length = 0;
  assert.deepEqual(await approve(s.m, 'fix', q.handle), { handle: q.handle, lifecycle: 'running' });
  assert.deepEqual(s.calls, [`reset-failed ${q.unit}`, `start ${q.unit}`], 'reset first: a failed transient unit keeps its name (stopped first only while it runs: manager.test.js)');
  const r = s.m.get(q.id);
  assert.equal(r?.lifecycle, 'running');
  assert.equal(r?.reason, undefined);
  assert.notEqual(r?.unit?.invocationId, before, 'a fresh invocation');
  assert.deepEqual(waitingMonitors(s.m, 'fix'), []);
});

test('approve refuses what does not wait, and never runs a poll quarantined for its work', async (t) => {
  const s = setup(t);
  const tail = await s.m.start('fix', { type: 'tail', path: path.join(s.dir, 'a.log') });
  await assert.rejects(approve(s.m, 'fix', tail.handle), /is running, not waiting/);
  const poll = await s.m.start('fix', { type: 'poll', argv: ['npm', 'install'], intervalS: 30 });
  await assert.rejects(approve(s.m, 'fix', poll.handle), /quarantined for what it runs \("npm install" is work/);
  await assert.rejects(approve(s.m, 'fix', 'zzzz'), /no monitor "zzzz"/);
});

test('a suspended or awaiting-confirmation monitor begins again through its runner', async (t) => {
  const s = setup(t);
  const log = path.join(s.dir, 'b.log');
  fs.writeFileSync(log, 'old\n');
  const a = await s.m.start('fix', { type: 'tail', path: log });
  s.m.patch(a.id, { lifecycle: 'suspended', reason: '5 failures in a row', consecutiveFailures: 5 });
  await approve(s.m, 'fix', a.handle);
  assert.equal(s.m.get(a.id)?.lifecycle, 'running');
  assert.equal(s.m.get(a.id)?.consecutiveFailures, 0);
  assert.equal(s.m.get(a.id)?.offset, 4, 'begun again: from the end of the file');
});

test('approve of a monitor whose session ended is refused', async (t) => {
  const s = setup(t);
  const q = await quarantinedSpawn(s);
  s.sessions.set('fix', { ...s.sessions.get('fix'), invocationId: 'c'.repeat(32) }); // a new session of the same name
  await assert.rejects(approve(s.m, 'fix', q.handle), /its session "fix" has ended/);
});

test('reject stops what is left, resets the failed unit and archives the record', async (t) => {
  const s = setup(t);
  const q = await quarantinedSpawn(s);
  s.calls.length = 0;
  const out = await reject(s.m, 'fix', q.handle);
  assert.deepEqual(s.calls, [`stop ${q.unit}`, `reset-failed ${q.unit}`]);
  assert.equal(s.m.get(q.id), undefined);
  assert.equal(fs.existsSync(path.join(s.host.recordsDir, `${q.id}.json`)), false);
  assert.ok(fs.existsSync(out.archivedTo));
  assert.match(fs.readFileSync(`${out.archivedTo}.why`, 'utf8'), /^rejected by sbctl monitor recover reject \(it was quarantined: it crashed again and again/);
  await assert.rejects(reject(s.m, 'fix', q.handle), /no monitor/);
});

test('stop --all stops this session\'s running and waiting monitors, and no other session\'s', async (t) => {
  const s = setup(t);
  const a = await s.m.start('fix', { type: 'spawn', argv: ['sleep', '1000'] });
  const q = await quarantinedSpawn(s);
  const done = await s.m.start('fix', { type: 'tail', path: path.join(s.dir, 'c.log') });
  await s.m.stop('fix', done.handle);
  const theirs = await s.m.start('other', { type: 'spawn', argv: ['sleep', '1000'] });
  assert.deepEqual(stoppable(s.m, 'fix').map((x) => x.handle).sort(), [a.handle, q.handle].sort(), 'the ended one is not listed');
  const out = await stopAll(s.m, 'fix');
  assert.deepEqual(out.map((x) => x.lifecycle), ['stopped', 'stopped']);
  assert.equal(s.m.get(theirs.id)?.lifecycle, 'running');
  assert.equal(s.units.get(`sb-monitor-${theirs.id}.service`).activeState, 'active');
  assert.equal(s.units.get(`sb-monitor-${a.id}.service`).activeState, 'inactive');
});

test('inspect: the full receipt, the main pid and invocation read from systemd', async (t) => {
  const s = setup(t);
  const a = await s.m.start('fix', { type: 'spawn', argv: ['vite'], label: 'dev', expiresAt: new Date(Date.now() + 3_600_000).toISOString() });
  const x = await inspect(s.m, 'fix', 'dev');
  assert.equal(x.id, a.id);
  assert.equal(x.handle, a.handle);
  assert.deepEqual(x.owner, { busName: ':1.7', epochMs: 1_700_000_000_000 });
  assert.match(x.commandHash, /^[0-9a-f]{64}$/);
  assert.equal(x.unit?.name, `sb-monitor-${a.id}.service`);
  assert.equal(x.unit?.mainPid, s.units.get(x.unit.name).mainPid);
  assert.equal(x.unit?.invocationId, x.unit?.invocationIdNow);
  assert.equal(x.startedAtMs, 1_700_000_000_000);
  assert.deepEqual(x.signalsSent, []);
  assert.ok(x.expiresInS !== null && x.expiresInS > 3590 && x.expiresInS <= 3600, `${x.expiresInS}`);
  assert.equal(x.exit, null);
  assert.equal(x.offset, 0);
});

test('gc: corrupt records, orphans and old finished ones; a dry run archives nothing; a running detached unit is kept', async (t) => {
  const s = setup(t);
  const live = await s.m.start('fix', { type: 'tail', path: path.join(s.dir, 'live.log') });
  const recent = await s.m.start('fix', { type: 'tail', path: path.join(s.dir, 'recent.log') });
  await s.m.stop('fix', recent.handle);
  const old = await s.m.start('fix', { type: 'tail', path: path.join(s.dir, 'old.log') });
  await s.m.stop('fix', old.handle);
  s.m.patch(old.id, { endedAtMs: Date.now() - FINISHED_RETENTION_MS - 60_000 });
  const orphan = await s.m.start('other', { type: 'tail', path: path.join(s.dir, 'orphan.log') });
  const detached = await s.m.start('other', { type: 'spawn', argv: ['server'], detached: true });
  s.sessions.delete('other');
  fs.writeFileSync(path.join(s.host.recordsDir, '00000000-0000-4000-8000-000000000000.json'), '{"torn');
  const calls = s.calls.length;

  const dry = await collect(s.m, false);
  assert.deepEqual(dry.map((e) => [e.kind, e.what]), [
    ['corrupt', '00000000-0000-4000-8000-000000000000.json'], ['finished', old.handle], ['orphan', orphan.handle], ['kept', detached.handle],
  ]);
  assert.match(dry[1].why, /^stopped 24\.0 h ago: kept 24\.0 h after its end$/);
  assert.match(dry[2].why, /its session "other" has ended/);
  assert.match(dry[3].why, /its unit still runs \(detached\)/);
  assert.ok(dry.every((e) => e.archivedTo === undefined));
  assert.ok(s.m.get(old.id) && s.m.get(orphan.id));

  const applied = await collect(s.m, true);
  assert.deepEqual(applied.map((e) => [e.kind, e.archivedTo !== undefined && fs.existsSync(e.archivedTo)]), [['corrupt', true], ['finished', true], ['orphan', true], ['kept', false]]);
  assert.equal(s.m.get(old.id), undefined);
  assert.equal(s.m.get(orphan.id), undefined);
  assert.ok(s.m.get(live.id) && s.m.get(recent.id) && s.m.get(detached.id));
  assert.equal(s.calls.length, calls, 'gc asked nothing of systemd but to read');
  assert.deepEqual(await collect(s.m, false), [dry[3]]);
});

test('approve: the old unit\'s removal, told by systemd while it is reset and started anew, is not taken for an exit', async (t) => {
  const s = setup(t);
  const q = await quarantinedSpawn(s);
  const reset = s.host.resetFailedUnit;
  // systemd unloads the reset unit and says so (UnitRemoved) before the new one is started
  s.host.resetFailedUnit = async (name) => { await reset(name); void s.m.onUnit(name); await new Promise(setImmediate); };
  await approve(s.m, 'fix', q.handle);
  await s.m.onUnit(q.unit);
  assert.equal(s.m.get(q.id)?.lifecycle, 'running');
  assert.deepEqual(s.notices.filter((n) => n.kind === 'exit'), []);
});
