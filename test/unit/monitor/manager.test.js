// @ts-check
'use strict';
// Issue 13: the monitor manager over a fake systemd and real files: a tail's matches reach the
// inbox coalesced; reuse, replace, quarantine; a spawn is a transient service whose exit and
// crash loop are told; stop and the session's end. The real systemd is the guest's (48-monitor).
const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { MonitorManager, MonitorRequestError } = require('../../../dist/monitor/manager.js');
const { planRecovery } = require('../../../dist/monitor/recovery.js');
const { JobFailedError } = require('../../../dist/systemd/job-error.js');

const MiB = 2 ** 20;
const settle = (ms = 0) => new Promise((r) => setTimeout(r, ms));

/** The recovery plan of what a restarted manager loaded, every session still live. */
const planLive = (loaded) => planRecovery(loaded.records.map((r) => ({ id: r.id, type: r.spec.type, lifecycle: r.lifecycle, sessionLive: true })), loaded.corrupt, Date.now());
/** A restarted manager recovers what is on record, every session still live. */
const recoverLive = (m) => m.apply(planLive(m.loadAll()));

function setup(t) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sb-monmgr-'));
  t.after(() => fs.rmSync(dir, { recursive: true, force: true }));
  const started = [];
  const stopped = [];
  const notices = [];
  const watched = new Set();
  const units = new Map();
  const host = {
    recordsDir: path.join(dir, 'records'), outputDir: path.join(dir, 'out'),
    startTransientService: async (name, props) => { started.push({ name, props: new Map(props.map(([n, , v]) => [n, v])) }); units.set(name, { activeState: 'active', invocationId: 'f'.repeat(32) }); },
    stopUnit: async (name) => { stopped.push(name); units.set(name, { activeState: 'inactive', result: 'success', execMainCode: 2, execMainStatus: 15 }); },
    getUnit: async (name) => units.get(name),
    watchFile: (f) => watched.add(f), unwatchFile: (f) => watched.delete(f),
    session: (id) => (id === 'fix' ? { id: 'fix', unit: 'sb-fix.scope', invocationId: 'a'.repeat(32), slice: 'sessions.slice', memoryHigh: 512 * MiB } : undefined),
    owner: { busName: ':1.7', epoch: 1 },
    notify: (session, n) => (notices.push({ session, ...n }), { ...n, id: notices.length }),
    resolveProgram: (name) => `/usr/bin/${name}`,
    monotonicMs: () => performance.now(),
    log: () => {},
  };
  const m = new MonitorManager(host);
  t.after(() => m.close());
  return { m, host, dir, started, stopped, notices, watched, units };
}

test('a tail: only matching new lines reach the inbox, coalesced into one notice', async (t) => {
  const s = setup(t);
  const log = path.join(s.dir, 'build.log');
  fs.writeFileSync(log, 'old ERROR before the monitor\n');
  const a = await s.m.start('fix', { type: 'tail', path: log, notifyOn: ['ERROR'], coalesceSeconds: 0.2, label: 'build' });
  assert.equal(a.answer, 'created');
  assert.ok(s.watched.has(log));
  fs.appendFileSync(log, 'ok\nERROR one\n');
  s.m.onFile(log);
  fs.appendFileSync(log, 'ERROR two\n');
  s.m.onFile(log);
  await settle(400);
  assert.equal(s.notices.length, 1);
  assert.deepEqual(s.notices[0].lines, ['ERROR one', 'ERROR two']);
  assert.equal(s.notices[0].text, 'build: 2 new lines matched');
  assert.equal(s.notices[0].session, 'fix');
});

test('the same request again is reused; replace stops the first; parallel makes another', async (t) => {
  const s = setup(t);
  const req = { type: 'tail', path: path.join(s.dir, 'x.log') };
  const a = await s.m.start('fix', req);
  assert.deepEqual(await s.m.start('fix', req), { answer: 'reused', id: a.id, handle: a.handle });
  const r = await s.m.start('fix', { ...req, reuse: 'replace' });
  assert.equal(r.answer, 'replaced');
  assert.equal(s.m.list('fix').find((x) => x.id === a.id)?.lifecycle, 'stopped');
  assert.equal((await s.m.start('fix', { ...req, reuse: 'parallel' })).answer, 'created');
});

test('a poll with work in it is quarantined with the reason, and nothing runs', async (t) => {
  const s = setup(t);
  const a = await s.m.start('fix', { type: 'poll', argv: ['npm', 'install'], intervalS: 30 });
  assert.equal(a.answer, 'quarantined');
  assert.match(a.reason ?? '', /"npm install" is work/);
  assert.equal(s.m.list('fix')[0]?.lifecycle, 'quarantined');
  assert.deepEqual(s.started, []);
});

test('a spawn is a transient service of the session; its exit and a crash loop are told', async (t) => {
  const s = setup(t);
  const a = await s.m.start('fix', { type: 'spawn', argv: ['vite', '--port', '3000'], label: 'dev' });
  assert.equal(s.started.length, 1);
  const { name, props } = s.started[0];
  assert.equal(name, `sb-monitor-${a.id}.service`);
  assert.equal(props.get('Slice'), 'sessions.slice');
  assert.deepEqual(props.get('ExecStart'), [['/usr/bin/vite', ['vite', '--port', '3000'], false]]);
  assert.equal(props.get('MemoryHigh'), BigInt(512 * MiB));
  assert.equal(s.m.list('fix')[0]?.unit?.invocationId, 'f'.repeat(32));
  s.units.set(name, { activeState: 'failed', result: 'start-limit-hit', execMainCode: 1, execMainStatus: 1 });
  await s.m.onUnit(name);
  assert.equal(s.m.list('fix')[0]?.lifecycle, 'quarantined');
  assert.match(s.notices.at(-1)?.text ?? '', /^dev: it crashed again and again/);
});

test('stop touches only its own unit; the session\'s end stops its spawns but not a detached one', async (t) => {
  const s = setup(t);
  const a = await s.m.start('fix', { type: 'spawn', argv: ['sleep', '1000'] });
  const d = await s.m.start('fix', { type: 'spawn', argv: ['sleep', '2000'], detached: true });
  await s.m.stop('fix', a.handle);
  assert.deepEqual(s.stopped, [`sb-monitor-${a.id}.service`]);
  await s.m.sessionEnded('fix');
  assert.deepEqual(s.stopped, [`sb-monitor-${a.id}.service`], 'the detached spawn lives on');
  assert.equal(s.m.list('fix').find((x) => x.id === d.id)?.lifecycle, 'running');
});

test('stop by label: the monitor the label names (guest 54: "no monitor" before, the label was looked for beside the spec)', async (t) => {
  const s = setup(t);
  const a = await s.m.start('fix', { type: 'tail', path: path.join(s.dir, 'a.log'), label: 'build-log' });
  const b = await s.m.start('fix', { type: 'tail', path: path.join(s.dir, 'b.log'), label: 'other' });
  assert.equal((await s.m.stop('fix', 'build-log')).id, a.id);
  assert.equal(s.m.list('fix').find((x) => x.id === b.id)?.lifecycle, 'running');
});

test('bad requests are said: unknown session, bad spec, an unknown handle', async (t) => {
  const s = setup(t);
  await assert.rejects(s.m.start('nobody', { type: 'tail', path: '/tmp/x' }), (e) => e instanceof MonitorRequestError && /no session "nobody"/.test(e.message));
  await assert.rejects(s.m.start('fix', { type: 'tail', path: 'rel' }), /path: an absolute path/);
  await assert.rejects(s.m.stop('fix', 'zzzz'), /no monitor "zzzz"/);
});

test('records survive: a new manager loads what the first saved', async (t) => {
  const s = setup(t);
  const a = await s.m.start('fix', { type: 'tail', path: path.join(s.dir, 'y.log'), label: 'y' });
  const again = new MonitorManager(/** @type {any} */ ({ recordsDir: path.join(s.dir, 'records') }));
  const { records, corrupt } = again.loadAll();
  assert.equal(corrupt, 0);
  assert.deepEqual(records.map((r) => [r.id, r.spec.label, r.lifecycle]), [[a.id, 'y', 'running']]);
});

test('a transition told by several PropertiesChanged at once is told to the agent once', async (t) => {
  const s = setup(t);
  const a = await s.m.start('fix', { type: 'spawn', argv: ['make', 'serve'], label: 'srv' });
  const name = `sb-monitor-${a.id}.service`;
  s.units.set(name, { activeState: 'failed', result: 'exit-code', execMainCode: 1, execMainStatus: 2 });
  await Promise.all([s.m.onUnit(name), s.m.onUnit(name), s.m.onUnit(name)]);
  assert.deepEqual(s.notices.map((n) => n.text), ['srv: it exited with status 2']);
});

test('the crash-loop fuse as systemd 252 reports it: failed, Result exit-code, NRestarts at the burst', async (t) => {
  const s = setup(t);
  const a = await s.m.start('fix', { type: 'spawn', argv: ['node', '-e', 'process.exit(3)'], label: 'crashy' });
  const name = `sb-monitor-${a.id}.service`;
  s.units.set(name, { activeState: 'activating', result: 'exit-code', execMainCode: 1, execMainStatus: 3, nRestarts: 1 });
  await s.m.onUnit(name);
  assert.equal(s.m.list('fix')[0]?.lifecycle, 'running', 'between two automatic restarts it still runs');
  s.units.set(name, { activeState: 'failed', result: 'exit-code', execMainCode: 1, execMainStatus: 3, nRestarts: 3 });
  await s.m.onUnit(name);
  assert.equal(s.m.list('fix')[0]?.lifecycle, 'quarantined');
  assert.match(s.notices.at(-1)?.text ?? '', /^crashy: it crashed again and again/);
});

test('a start job that fails after the program ran is a crash loop, not a refusal: created, quarantined, told once (guest 48, CI 2026-12-03: "the job ended failed")', async (t) => {
  const s = setup(t);
  // systemd 252, Type=exec: the program exited before its exec was seen, so the start job stayed
  // through each automatic restart and failed when the start limit blew
  s.host.startTransientService = async (name) => {
    s.units.set(name, { activeState: 'failed', result: 'exit-code', execMainCode: 1, execMainStatus: 3, nRestarts: 3, invocationId: 'e'.repeat(32) });
    throw new JobFailedError('starting', name, 'failed');
  };
  const a = await s.m.start('fix', { type: 'spawn', argv: ['sh', '-c', 'exit 3'], label: 'crashy' });
  assert.equal(a.answer, 'created');
  const r = s.m.list('fix')[0];
  assert.equal(r?.lifecycle, 'quarantined');
  assert.equal(r?.unit?.invocationId, 'e'.repeat(32));
  assert.deepEqual(s.notices.map((n) => n.text.split(':')[0] + ':' + n.kind), ['crashy:quarantined']);
  await s.m.onUnit(`sb-monitor-${a.id}.service`);
  assert.equal(s.notices.length, 1, 'the unit event after it tells nothing more');
});

test('a start job that fails after a unit event told the crash loop keeps that ending, told once', async (t) => {
  const s = setup(t);
  s.host.startTransientService = async (name) => {
    s.units.set(name, { activeState: 'failed', result: 'exit-code', execMainCode: 1, execMainStatus: 3, nRestarts: 3 });
    await s.m.onUnit(name); // PropertiesChanged reached sbd before JobRemoved
    throw new JobFailedError('starting', name, 'failed');
  };
  const a = await s.m.start('fix', { type: 'spawn', argv: ['sh', '-c', 'exit 3'], label: 'crashy' });
  assert.equal(a.answer, 'created');
  assert.equal(s.m.list('fix')[0]?.lifecycle, 'quarantined');
  assert.equal(s.notices.length, 1);
});

test('a start job that fails because systemd could not set the program up (203/EXEC) is a refusal: said, and the monitor gone', async (t) => {
  const s = setup(t);
  s.host.startTransientService = async (name) => {
    s.units.set(name, { activeState: 'failed', result: 'exit-code', execMainCode: 1, execMainStatus: 203, nRestarts: 3 });
    throw new JobFailedError('starting', name, 'failed');
  };
  await assert.rejects(s.m.start('fix', { type: 'spawn', argv: ['/nonexistent/prog'] }), (e) => e instanceof MonitorRequestError && /systemd refused to start the monitor's unit .*the job ended "failed"/.test(e.message));
  assert.equal(s.m.list('fix')[0]?.lifecycle, 'gone');
  assert.equal(s.notices.length, 0);
});

test('a refused StartTransientUnit call (no job at all) is a refusal, whatever the unit says', async (t) => {
  const s = setup(t);
  s.host.startTransientService = async (name) => {
    s.units.set(name, { activeState: 'failed', result: 'exit-code', execMainCode: 1, execMainStatus: 3 });
    throw new Error('Unit sb-monitor-x.service was already loaded or has a fragment file.');
  };
  await assert.rejects(s.m.start('fix', { type: 'spawn', argv: ['sleep', '5'] }), /systemd refused to start the monitor's unit/);
  assert.equal(s.m.list('fix')[0]?.lifecycle, 'gone');
});

test('a slow crash loop, each run too long for systemd\'s fuse, is quarantined by sbd\'s own count: told once, its unit stopped, counted anew on approve', async (t) => {
  const s = setup(t);
  let now = 0;
  s.host.monotonicMs = () => now;
  s.host.resetFailedUnit = async () => {};
  const a = await s.m.start('fix', { type: 'spawn', argv: ['sh', '-c', 'sleep 30; exit 3'], label: 'slow' });
  const name = `sb-monitor-${a.id}.service`;
  // systemd 252 between two automatic restarts: activating, Result exit-code, NRestarts up by one each crash
  const crash = async (n, atMs) => {
    now = atMs;
    s.units.set(name, { activeState: 'activating', result: 'exit-code', execMainCode: 1, execMainStatus: 3, nRestarts: n });
    await Promise.all([s.m.onUnit(name), s.m.onUnit(name)]); // a transition comes as several PropertiesChanged
  };
  await crash(1, 32_000);
  await crash(2, 64_000);
  await crash(3, 96_000);
  assert.equal(s.m.list('fix')[0]?.lifecycle, 'running', 'three crashes in a row are restarts, not a loop yet');
  assert.deepEqual(s.m.list('fix')[0]?.crashes?.atMonoMs, [32_000, 64_000, 96_000]);
  assert.deepEqual(s.notices, []);
  await crash(4, 128_000);
  const r = s.m.list('fix')[0];
  assert.equal(r?.lifecycle, 'quarantined');
  assert.deepEqual(r?.exit, { code: 'exited', status: 3 });
  assert.deepEqual(s.notices.map((n) => n.text), ['slow: it crashed 4 times within 30 min, each time restarted by systemd: sbd stopped it; sbctl monitor recover decides']);
  await settle();
  assert.deepEqual(s.stopped, [name], 'its unit stopped: systemd\'s queued restart cancelled');
  await s.m.onUnit(name); // the stop's own changes
  assert.equal(s.notices.length, 1, 'the stop is not told as an exit');
  // approved: a new unit, its crashes counted from nothing
  const again = await s.m.restart(a.id);
  assert.equal(again.lifecycle, 'running');
  assert.equal(again.crashes, undefined);
  await crash(1, 200_000);
  assert.equal(s.m.list('fix')[0]?.lifecycle, 'running');
});

test('sbd killed between a slow crash loop\'s quarantine and its unit\'s stop: the next sbd stops the unit, and approve starts a fresh one where systemd refuses a loaded name', async (t) => {
  const s = setup(t);
  let now = 0;
  s.host.monotonicMs = () => now;
  // systemd: a transient unit's name is taken while it is loaded; a stopped unit with a failure stays loaded until reset
  s.host.startTransientService = async (name, props) => {
    if (s.units.has(name)) throw new Error(`Unit ${name} was already loaded or has a fragment file.`);
    s.started.push({ name, props: new Map(props.map(([n, , v]) => [n, v])) });
    s.units.set(name, { activeState: 'active', invocationId: 'f'.repeat(32) });
  };
  s.host.stopUnit = async (name) => { s.stopped.push(name); s.units.set(name, { activeState: 'failed', result: 'exit-code', execMainCode: 1, execMainStatus: 3 }); };
  // ResetFailedUnit unloads a failed (or inactive) unit; one restarting (activating) keeps its name
  s.host.resetFailedUnit = async (name) => { if (['failed', 'inactive'].includes(s.units.get(name)?.activeState)) s.units.delete(name); };
  const a = await s.m.start('fix', { type: 'spawn', argv: ['sh', '-c', 'sleep 30; exit 3'], label: 'slow' });
  const name = `sb-monitor-${a.id}.service`;
  const crash = async (m, n, atMs) => {
    now = atMs;
    s.units.set(name, { activeState: 'activating', result: 'exit-code', execMainCode: 1, execMainStatus: 3, nRestarts: n });
    await m.onUnit(name);
  };
  // the first sbd saves the quarantine and dies before its stop reaches systemd
  const stop = s.host.stopUnit;
  s.host.stopUnit = async () => {};
  for (let n = 1; n <= 4; n++) await crash(s.m, n, n * 32_000);
  assert.equal(s.m.list('fix')[0]?.lifecycle, 'quarantined');
  s.m.close();
  s.host.stopUnit = stop;
  assert.equal(s.units.get(name)?.activeState, 'activating', 'systemd restarts it on');
  // the next sbd: the plan from what systemd says of the unit
  const again = new MonitorManager(s.host);
  t.after(() => again.close());
  const loaded = again.loadAll();
  again.apply(planRecovery(loaded.records.map((r) => ({ id: r.id, type: r.spec.type, lifecycle: r.lifecycle, sessionLive: true, unit: s.units.get(name) })), 0, Date.now()));
  await settle();
  assert.deepEqual(s.stopped, [name], 'its unit stopped by the next sbd');
  assert.equal(again.list('fix')[0]?.lifecycle, 'quarantined', 'still waiting for the agent');
  assert.equal(s.notices.length, 1, 'told once, by the first sbd');
  // approve: the old unit (failed, loaded) is reset and a fresh one starts under the same name
  s.units.set(name, { activeState: 'activating', result: 'exit-code', nRestarts: 5 }); // even had it been restarted since
  const ok = await again.restart(a.id);
  assert.equal(ok.lifecycle, 'running');
  assert.equal(s.started.length, 2, 'a fresh unit started');
  assert.equal(s.units.get(name)?.activeState, 'active');
});

test('a unit that ends because we stopped it is not told as an exit, and keeps the stop\'s reason', async (t) => {
  const s = setup(t);
  const a = await s.m.start('fix', { type: 'spawn', argv: ['sleep', '1000'], label: 'late' });
  const name = `sb-monitor-${a.id}.service`;
  s.units.delete(name); // systemd's PropertiesChanged of its end is read while our stop is under way: the unit is gone
  const reading = s.m.onUnit(name);
  await s.m.sessionEnded('fix');
  await reading;
  const after = s.m.list('fix')[0];
  assert.equal(after?.lifecycle, 'stopped');
  assert.equal(after?.reason, 'its session ended');
  assert.deepEqual(s.notices, [], 'our own stop is not an exit to tell');
});

test('stop finds a monitor by its label, as its help says (handle, id or label)', async (t) => {
  const s = setup(t);
  const a = await s.m.start('fix', { type: 'spawn', argv: ['sleep', '1000'], label: 'dev' });
  assert.equal((await s.m.stop('fix', 'dev')).id, a.id);
  assert.deepEqual(s.stopped, [`sb-monitor-${a.id}.service`]);
});

test('systemd\'s RuntimeMaxSec ran out (Result timeout): expired, told once, and the restart Restart=on-failure queued is stopped', async (t) => {
  const s = setup(t);
  const a = await s.m.start('fix', { type: 'spawn', argv: ['sleep', '1000'], label: 'job', expiresAt: new Date(Date.now() + 60_000).toISOString() });
  const name = `sb-monitor-${a.id}.service`;
  // systemd 252 takes a timeout for a failure: between two starts, activating (auto-restart), Result timeout
  s.units.set(name, { activeState: 'activating', result: 'timeout', execMainCode: 2, execMainStatus: 15, nRestarts: 1 });
  await s.m.onUnit(name);
  await s.m.onUnit(name);
  assert.equal(s.m.list('fix')[0]?.lifecycle, 'expired');
  assert.deepEqual(s.stopped, [name], 'the queued restart is cancelled by a stop');
  assert.deepEqual(s.notices.map((n) => [n.kind, n.text]), [['expired', 'job: its expiresAt has passed: systemd ended it (RuntimeMaxSec)']]);
});

test('a spawn\'s RuntimeMaxUSec is expiresAt plus the backstop: sbd\'s own timer stops it first', async (t) => {
  const s = setup(t);
  const { EXPIRY_BACKSTOP_S } = require('../../../dist/monitor/unit.js');
  await s.m.start('fix', { type: 'spawn', argv: ['sleep', '1000'], expiresAt: new Date(Date.now() + 60_000).toISOString() });
  const us = Number(s.started[0].props.get('RuntimeMaxUSec'));
  assert.ok(us > (59 + EXPIRY_BACKSTOP_S) * 1e6 && us <= (61 + EXPIRY_BACKSTOP_S) * 1e6, `${us} µs`);
});

test('a start whose expiresAt has passed is refused', async (t) => {
  const s = setup(t);
  await assert.rejects(s.m.start('fix', { type: 'tail', path: '/tmp/x.log', expiresAt: '2020-01-01T00:00:00Z' }), (e) => e instanceof MonitorRequestError && /expiresAt 2020-01-01T00:00:00Z has already passed/.test(e.message));
});

test('sbd stopping tells what was gathering, instead of losing it (its offset is saved already)', async (t) => {
  const s = setup(t);
  const log = path.join(s.dir, 'c.log');
  fs.writeFileSync(log, '');
  await s.m.start('fix', { type: 'tail', path: log, notifyOn: ['ERROR'], coalesceSeconds: 60, label: 'c' });
  fs.appendFileSync(log, 'ERROR late\n');
  s.m.onFile(log);
  assert.deepEqual(s.notices, []);
  s.m.close();
  assert.deepEqual(s.notices.map((n) => n.lines), [['ERROR late']]);
});

test('recovery: a spawn whose session ended while sbd was away is saved stopped, then its unit stopped', async (t) => {
  const s = setup(t);
  const a = await s.m.start('fix', { type: 'spawn', argv: ['sleep', '1000'] });
  const again = new MonitorManager({ ...s.m.host, stopUnit: async (name) => { s.stopped.push(`${name} while ${again.get(a.id)?.lifecycle}`); } });
  again.loadAll();
  again.apply({ actions: [{ id: a.id, action: 'end-with-session', why: 'its session ended while sbd was not running: stopped with it' }], summary: '' });
  await settle();
  assert.deepEqual(s.stopped, [`sb-monitor-${a.id}.service while stopped`]);
  assert.equal(again.get(a.id)?.reason, 'its session ended while sbd was not running: stopped with it');
});

test('sbd killed -9 inside a coalesce window: the matched lines not yet told are told after the restart, once', async (t) => {
  const s = setup(t);
  const log = path.join(s.dir, 'build.log');
  fs.writeFileSync(log, '');
  const a = await s.m.start('fix', { type: 'tail', path: log, notifyOn: ['ERROR'], coalesceSeconds: 60, label: 'build' });
  fs.appendFileSync(log, 'ERROR before the kill\nok\n');
  s.m.onFile(log);
  assert.equal(s.notices.length, 0, 'still gathering: coalesceSeconds is 60');
  // kill -9: no close(), nothing flushed; a new manager resumes from what is on record
  const notices = [];
  const again = new MonitorManager({ ...s.host, notify: (session, n) => (notices.push({ session, ...n }), { ...n, id: 100 + notices.length }) });
  t.after(() => again.close());
  recoverLive(again);
  fs.appendFileSync(log, 'ERROR after the restart\n');
  again.onFile(log);
  again.close(); // sbd stops: what was gathering is told now
  assert.deepEqual(notices.flatMap((n) => n.lines ?? []), ['ERROR before the kill', 'ERROR after the restart'], 'told after the restart, nothing lost');
  // and a clean stop of the restarted sbd saved past what it told: a third start tells nothing again
  const third = [];
  const last = new MonitorManager({ ...s.host, notify: (session, n) => (third.push(n), { ...n, id: 200 + third.length }) });
  t.after(() => last.close());
  recoverLive(last);
  last.close();
  assert.deepEqual(third, [], 'nothing told twice');
  assert.equal(a.answer, 'created');
});

test('sbd killed -9 after a notice was appended, before the offset past its lines was saved: the restart tells none of them again (guest 55 told 18 ticks twice)', async (t) => {
  const s = setup(t);
  const log = path.join(s.dir, 'spawn-like.log');
  fs.writeFileSync(log, 'old\n');
  const snapshot = path.join(s.dir, 'records-at-the-kill');
  const told = [];
  // the kill lands right after the inbox append: the records dir is what the next sbd finds
  const first = new MonitorManager({ ...s.host, notify: (session, n) => { told.push({ session, ...n, id: told.length + 1 }); fs.cpSync(s.host.recordsDir, snapshot, { recursive: true }); return told.at(-1); } });
  t.after(() => first.close());
  const a = await first.start('fix', { type: 'tail', path: log, notifyOn: ['^tick'], coalesceSeconds: 0, label: 'ticker' });
  fs.appendFileSync(log, 'tick 1\ntick 2\n');
  first.onFile(log);
  await settle(20);
  assert.deepEqual(told.flatMap((n) => n.lines ?? []), ['tick 1', 'tick 2']);
  assert.equal(told[0].monitor, a.id);
  assert.equal(told[0].through, fs.statSync(log).size, 'the notice says how far its lines were read');
  fs.appendFileSync(log, 'tick 3\n'); // while sbd is down

  const again = [];
  const restarted = new MonitorManager({
    ...s.host, recordsDir: snapshot,
    notify: (session, n) => (again.push(n), { ...n, id: 100 + again.length }),
    toldThrough: (session) => new Map(told.filter((n) => n.session === session && n.through !== undefined).map((n) => [n.monitor, { through: n.through, notice: n.id }])),
  });
  t.after(() => restarted.close());
  const loaded = restarted.loadAll();
  assert.ok(loaded.records[0].offset < told[0].through, 'the kill left the offset where the told lines began');
  restarted.apply(planLive(loaded));
  await settle(20);
  assert.deepEqual(again.flatMap((n) => n.lines ?? []), ['tick 3'], 'only what came after the told lines');
  assert.equal(restarted.get(a.id)?.offset, fs.statSync(log).size);
});

test('a notice the record was saved after says nothing new: a file truncated and grown since is read from the saved offset, not past the old notice', async (t) => {
  const s = setup(t);
  const log = path.join(s.dir, 'rotated.log');
  fs.writeFileSync(log, '');
  const told = [];
  const first = new MonitorManager({ ...s.host, notify: (session, n) => { told.push({ session, ...n, id: told.length + 1 }); return told.at(-1); } });
  const a = await first.start('fix', { type: 'tail', path: log, notifyOn: ['^ERROR'], coalesceSeconds: 0, label: 'app' });
  fs.appendFileSync(log, `${'x'.repeat(100)}\nERROR old\n`);
  first.onFile(log);
  await settle(20);
  assert.equal(told.length, 1);
  assert.equal(first.get(a.id)?.toldNotice, 1, 'the offset saved past notice 1');
  // truncated (rotated in place): read from its start, nothing matched, the offset saved lower
  fs.writeFileSync(log, 'ok\n');
  first.onFile(log);
  await settle(20);
  assert.equal(first.get(a.id)?.offset, 3);
  first.close();
  // while sbd was down it grew past where notice 1 ended, with a match before that point
  fs.appendFileSync(log, `ERROR new\n${'y'.repeat(300)}\n`);
  const again = [];
  const restarted = new MonitorManager({
    ...s.host, notify: (session, n) => (again.push(n), { ...n, id: 100 + again.length }),
    toldThrough: () => new Map([[a.id, { through: told[0].through, notice: 1 }]]),
  });
  t.after(() => restarted.close());
  recoverLive(restarted);
  await settle(20);
  assert.deepEqual(again.flatMap((n) => n.lines ?? []), ['ERROR new'], 'the new file read from its start: nothing lost');
});

test('the notice recovery resumed past is recorded with the offset: a second restart, after the file was truncated, does not resume past it again', async (t) => {
  const s = setup(t);
  const log = path.join(s.dir, 'twice.log');
  fs.writeFileSync(log, '');
  const snapshot = path.join(s.dir, 'records-at-the-kill');
  const told = [];
  const inbox = () => new Map(told.filter((n) => n.through !== undefined).map((n) => [n.monitor, { through: n.through, notice: n.id }]));
  const notify = (session, n) => { told.push({ session, ...n, id: told.length + 1 }); return told.at(-1); };
  // killed right after notice 1's append, before its offset was saved
  const first = new MonitorManager({ ...s.host, notify: (session, n) => { const e = notify(session, n); fs.cpSync(s.host.recordsDir, snapshot, { recursive: true }); return e; } });
  const a = await first.start('fix', { type: 'tail', path: log, notifyOn: ['^ERROR'], coalesceSeconds: 0, label: 'app' });
  fs.appendFileSync(log, `${'x'.repeat(200)}\nERROR one\n`);
  first.onFile(log);
  await settle(20);
  first.close();
  // first restart: resumes past notice 1, and says so in the record
  const second = new MonitorManager({ ...s.host, recordsDir: snapshot, notify, toldThrough: inbox });
  recoverLive(second);
  assert.equal(second.get(a.id)?.offset, told[0].through);
  assert.equal(second.get(a.id)?.toldNotice, 1, "notice 1's id kept with the offset");
  // the file is truncated; unmatched lines; the offset saved lower; a clean stop
  fs.writeFileSync(log, 'ok\n');
  second.onFile(log);
  await settle(20);
  assert.equal(second.get(a.id)?.offset, 3);
  second.close();
  // it grows past notice 1's through while sbd is down, with a match before that point
  fs.appendFileSync(log, `ERROR two\n${'y'.repeat(300)}\n`);
  const again = [];
  const third = new MonitorManager({ ...s.host, recordsDir: snapshot, notify: (session, n) => { again.push(n); return notify(session, n); }, toldThrough: inbox });
  t.after(() => third.close());
  recoverLive(third);
  await settle(20);
  assert.deepEqual(again.flatMap((n) => n.lines ?? []), ['ERROR two'], 'not skipped');
});

test('a notice the inbox could not take leaves the offset where its lines began: a restart tells them', async (t) => {
  const s = setup(t);
  const log = path.join(s.dir, 'full-disk.log');
  fs.writeFileSync(log, '');
  const m = new MonitorManager({ ...s.host, notify: () => undefined }); // the inbox write failed (sbd warned)
  const a = await m.start('fix', { type: 'tail', path: log, notifyOn: ['^ERROR'], coalesceSeconds: 0, label: 'app' });
  fs.appendFileSync(log, 'ERROR kept\n');
  m.onFile(log);
  await settle(20);
  assert.equal(m.get(a.id)?.offset, 0, 'not moved past lines never told');
  m.close();
  const told = [];
  const again = new MonitorManager({ ...s.host, notify: (session, n) => (told.push(n), { ...n, id: 1 }) });
  t.after(() => again.close());
  recoverLive(again);
  await settle(20);
  assert.deepEqual(told.flatMap((n) => n.lines ?? []), ['ERROR kept']);
});

test('before recovery (adoption can outlast READY) the records from before the restart are seen: a start of the same monitor is reused, not run twice', async (t) => {
  const s = setup(t);
  const log = path.join(s.dir, 'build.log');
  fs.writeFileSync(log, '');
  const a = await s.m.start('fix', { type: 'tail', path: log, notifyOn: ['ERROR'], label: 'build' });
  s.m.close();
  s.watched.clear();
  const again = new MonitorManager(s.host);
  t.after(() => again.close());
  again.loadAll(); // at sbd's start, before its interface is on the bus
  assert.deepEqual(again.list('fix').map((r) => r.id), [a.id], 'listed before recovery');
  const b = await again.start('fix', { type: 'tail', path: log, notifyOn: ['ERROR'], label: 'build' });
  assert.deepEqual([b.answer, b.id], ['reused', a.id]);
  const pending = again.toRecover();
  assert.deepEqual(pending.records.map((r) => r.id), [a.id], 'unchanged by the reuse: still recovery\'s');
  again.apply(planLive(pending));
  assert.deepEqual(again.list('fix').map((r) => [r.id, r.lifecycle]), [[a.id, 'running']], 'one monitor, resumed');
  assert.ok(s.watched.has(log), 'watched once recovered');
});

test('before recovery, a record of an earlier run of the session is not reused (recovery ends it), and a stop is the request\'s to keep', async (t) => {
  const s = setup(t);
  const a = await s.m.start('fix', { type: 'tail', path: path.join(s.dir, 'x.log'), label: 'x' });
  const c = await s.m.start('fix', { type: 'tail', path: path.join(s.dir, 'z.log'), label: 'z' });
  s.m.close();
  // the session 'fix' has run again since (a new invocation): its old record is not this session's
  const rerun = { ...s.host, session: (id) => (id === 'fix' ? { ...s.host.session(id), invocationId: 'b'.repeat(32) } : undefined) };
  const again = new MonitorManager(rerun);
  t.after(() => again.close());
  again.loadAll();
  const b = await again.start('fix', { type: 'tail', path: path.join(s.dir, 'x.log'), label: 'x' });
  assert.equal(b.answer, 'created');
  assert.notEqual(b.id, a.id);
  await again.stop('fix', c.id);
  assert.deepEqual(again.toRecover().records.map((r) => r.id), [a.id], 'the stopped one is the request\'s, the new one this sbd\'s');
  again.apply({ actions: [{ id: c.id, action: 'resume', why: 'planned before the stop' }], summary: '' });
  assert.equal(again.get(c.id)?.lifecycle, 'stopped', 'the stop stands');
});

test('before recovery, a unit event of a spawn on record is left to recovery: nothing is told under the last sbd\'s lease', async (t) => {
  const s = setup(t);
  const a = await s.m.start('fix', { type: 'spawn', argv: ['sleep', '1000'], label: 'dev' });
  s.m.close();
  const again = new MonitorManager(s.host);
  t.after(() => again.close());
  again.loadAll();
  const name = `sb-monitor-${a.id}.service`;
  s.units.set(name, { activeState: 'failed', result: 'start-limit-hit', execMainCode: 1, execMainStatus: 1 });
  await again.onUnit(name);
  assert.equal(again.get(a.id)?.lifecycle, 'running', 'unchanged before recovery');
  assert.deepEqual(s.notices, []);
});
