// @ts-check
'use strict';
// Issue 13: poll and ssh monitors through the manager, over a fake systemd and real files: a
// transient timer plus service in one call, each tick counted once from its receipt, output
// told by notifyOn, a failure streak backed off by a new timer and told once, suspension after
// maxConsecutiveFailures, stop, a timer stopped behind sbd's back, ssh's argv, and what a restart
// of sbd does (a local poll awaits confirmation with its timer stopped; ssh resumes). The real
// systemd is the guest's (49-poll).
const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { MonitorManager, MonitorRequestError } = require('../../../dist/monitor/manager.js');
const { planRecovery } = require('../../../dist/monitor/recovery.js');
const { restartPoll } = require('../../../dist/monitor/runners/poll.js');

const MiB = 2 ** 20;
const settle = (ms = 20) => new Promise((r) => setTimeout(r, ms));

function setup(t, { dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sb-pollmgr-')), programs = ['cat', 'test', 'ssh'] } = {}) {
  t.after(() => fs.rmSync(dir, { recursive: true, force: true }));
  const started = [];
  const stopped = [];
  const notices = [];
  const watched = new Set();
  const units = new Map();
  const host = {
    recordsDir: path.join(dir, 'records'), outputDir: path.join(dir, 'out'),
    startTransientService: async () => { throw new Error('a poll starts no lone service'); },
    startTransientTimer: async (timer, timerProps, service, serviceProps) => {
      if (units.has(timer) || units.has(service)) throw Object.assign(new Error(`Unit ${timer} was already loaded or has a fragment file.`), { type: 'org.freedesktop.systemd1.UnitExists' });
      started.push({ timer, service, timerProps: new Map(timerProps.map(([n, , v]) => [n, v])), serviceProps: new Map(serviceProps.map(([n, , v]) => [n, v])) });
      units.set(timer, { unit: timer, activeState: 'active', invocationId: 't'.repeat(32) });
      units.set(service, { unit: service, activeState: 'inactive', invocationId: '', result: 'success' });
    },
    stopUnit: async (name) => {
      stopped.push(name);
      if (!units.has(name)) throw Object.assign(new Error(`Unit ${name} not loaded.`), { type: 'org.freedesktop.systemd1.NoSuchUnit' });
      units.delete(name); // CollectMode=inactive-or-failed: unloaded once stopped
    },
    getUnit: async (name) => units.get(name),
    watchFile: (f) => watched.add(f), unwatchFile: (f) => watched.delete(f),
    session: (id) => (id === 'fix' ? { id: 'fix', unit: 'sb-fix.scope', invocationId: 'a'.repeat(32), slice: 'sessions.slice', memoryHigh: 512 * MiB } : undefined),
    owner: { busName: ':1.7', epoch: 1 },
    notify: (session, n) => (notices.push({ session, ...n }), { ...n, id: notices.length }),
    resolveProgram: (name) => (programs.includes(name) ? `/usr/bin/${name}` : undefined),
    monotonicMs: () => performance.now(),
    log: () => {},
  };
  const m = new MonitorManager(host);
  t.after(() => m.close());
  let n = 0;
  /** The service ends one tick: a new invocation with this receipt; systemd signals it. */
  const tick = async (id, receipt) => {
    n += 1;
    const service = `sb-monitor-${id}.service`;
    units.set(service, { unit: service, activeState: receipt.result === 'success' ? 'inactive' : 'failed', invocationId: n.toString(16).padStart(32, '0').replace(/^0/, 'b'), execMainCode: 1, execMainStatus: 0, ...receipt });
    await m.onUnit(service);
    await settle();
  };
  return { m, dir, host, started, stopped, notices, watched, units, tick };
}

const rec = (s, id) => s.m.list('fix').find((r) => r.id === id);

test('a poll is one StartTransientUnit: its timer started, its service of the session\'s slice beside it', async (t) => {
  const s = setup(t);
  const a = await s.m.start('fix', { type: 'poll', argv: ['cat', '/tmp/status'], intervalS: 30, timeoutS: 4, label: 'st' });
  assert.equal(a.answer, 'created');
  assert.equal(s.started.length, 1);
  const { timer, service, timerProps, serviceProps } = s.started[0];
  assert.equal(timer, `sb-monitor-${a.id}.timer`);
  assert.equal(service, `sb-monitor-${a.id}.service`);
  assert.deepEqual(timerProps.get('TimersMonotonic'), [['OnActiveSec', 0n], ['OnUnitInactiveSec', 30_000_000n]]);
  assert.deepEqual(serviceProps.get('ExecStart'), [['/usr/bin/cat', ['cat', '/tmp/status'], false]], 'the program found on sbd\'s PATH');
  assert.equal(serviceProps.get('Slice'), 'sessions.slice');
  assert.equal(serviceProps.get('MemoryHigh'), BigInt(512 * MiB));
  assert.equal(serviceProps.get('RuntimeMaxUSec'), 4_000_000n);
  const out = serviceProps.get('StandardOutputFileToAppend');
  assert.ok(s.watched.has(out), 'its output file is followed');
  assert.equal(rec(s, a.id)?.unit?.name, timer);
});

test('each tick is counted once from its receipt; matching output reaches the inbox', async (t) => {
  const s = setup(t);
  const a = await s.m.start('fix', { type: 'poll', argv: ['cat', '/tmp/status'], intervalS: 10, notifyOn: ['^state: done'], coalesceSeconds: 0.05, label: 'train' });
  const service = `sb-monitor-${a.id}.service`;
  await s.tick(a.id, { result: 'success' });
  await s.m.onUnit(service); // the same end told again (several PropertiesChanged)
  assert.equal(rec(s, a.id)?.ticks, 1);
  const out = s.started[0].serviceProps.get('StandardOutputFileToAppend');
  fs.appendFileSync(out, 'state: running\n');
  s.m.onFile(out);
  await s.tick(a.id, { result: 'success' });
  fs.appendFileSync(out, 'state: done\n');
  s.m.onFile(out);
  await settle(150);
  assert.equal(rec(s, a.id)?.ticks, 2, 'ticks are the service\'s runs, not the output reads');
  assert.deepEqual(s.notices.map((n) => [n.kind, n.text, n.lines]), [['match', 'train: 1 new line matched', ['state: done']]]);
  assert.equal(s.started.length, 1, 'successes leave the timer alone');
});

test('a failure streak: told once, backed off by a new timer each time, suspended after the limit with one notice', async (t) => {
  const s = setup(t);
  const a = await s.m.start('fix', { type: 'poll', argv: ['test', '-e', '/tmp/flag'], intervalS: 10, maxConsecutiveFailures: 3, label: 'flag' });
  const timer = `sb-monitor-${a.id}.timer`;
  await s.tick(a.id, { result: 'exit-code', execMainStatus: 1 });
  assert.deepEqual(s.notices.map((n) => n.kind), ['failing']);
  assert.match(s.notices[0].text, /^flag: the probe exited with status 1; retrying less often/);
  assert.equal(s.started.length, 2, 'the timer was replaced');
  assert.ok(s.stopped.includes(timer));
  const first = s.started[1].timerProps;
  assert.equal(first.get('TimersMonotonic')[0][0], 'OnActiveSec');
  assert.ok(first.get('TimersMonotonic')[0][1] > 10_000_000n, 'a longer wait than the interval');
  assert.ok(first.get('RandomizedDelayUSec') > 0n, 'jitter drawn by systemd');
  await s.tick(a.id, { result: 'exit-code', execMainStatus: 1 });
  assert.equal(s.notices.length, 1, 'no notice per tick');
  assert.ok(s.started[2].timerProps.get('TimersMonotonic')[0][1] > first.get('TimersMonotonic')[0][1], 'each failure waits longer');
  await s.tick(a.id, { result: 'exit-code', execMainStatus: 2 });
  const r = rec(s, a.id);
  assert.equal(r?.lifecycle, 'suspended');
  assert.equal(r?.consecutiveFailures, 3);
  assert.deepEqual(r?.exit, { code: 'exited', status: 2 });
  assert.deepEqual(s.notices.map((n) => n.kind), ['failing', 'suspended']);
  assert.match(s.notices[1].text, /^flag: suspended after 3 failed ticks in a row; the last exited with status 2/);
  assert.equal(s.started.length, 3, 'no timer after the suspension');
  assert.equal(s.units.has(timer), false, 'its timer is stopped');
  await s.tick(a.id, { result: 'exit-code', execMainStatus: 2 });
  assert.equal(s.notices.length, 2, 'a suspended poll tells nothing more');
  // reading a unit that is gone makes systemd load a stub and unload it (UnitRemoved again): a
  // suspended poll's unit events are not read at all
  const getUnit = s.host.getUnit;
  let reads = 0;
  s.host.getUnit = async (name) => { reads += 1; return getUnit(name); };
  await s.m.onUnit(timer);
  await s.m.onUnit(`sb-monitor-${a.id}.service`);
  s.host.getUnit = getUnit;
  assert.equal(reads, 0);
});

test('a success after failures: told once, and the interval comes back', async (t) => {
  const s = setup(t);
  const a = await s.m.start('fix', { type: 'poll', argv: ['cat', '/tmp/x'], intervalS: 10, timeoutS: 3 });
  await s.tick(a.id, { result: 'timeout', execMainCode: 2, execMainStatus: 15 });
  assert.match(s.notices[0].text, /timed out after 3 s and was stopped/);
  await s.tick(a.id, { result: 'success' });
  assert.deepEqual(s.notices.map((n) => n.kind), ['failing', 'recovered']);
  assert.equal(rec(s, a.id)?.consecutiveFailures, 0);
  assert.deepEqual(s.started.at(-1)?.timerProps.get('TimersMonotonic'), [['OnActiveSec', 10_000_000n], ['OnUnitInactiveSec', 10_000_000n]]);
  assert.equal(s.started.at(-1)?.timerProps.has('RandomizedDelayUSec'), false);
});

test('a re-created pair waits for systemd to unload the old one (UnitExists is retried)', async (t) => {
  const s = setup(t);
  const a = await s.m.start('fix', { type: 'poll', argv: ['cat', '/tmp/x'], intervalS: 10 });
  const service = `sb-monitor-${a.id}.service`;
  const stopUnit = s.host.stopUnit;
  // systemd unloads the stopped service one turn later
  s.host.stopUnit = async (name) => { s.stopped.push(name); if (name.endsWith('.timer')) s.units.delete(name); else setTimeout(() => s.units.delete(name), 100); };
  await s.tick(a.id, { result: 'exit-code', execMainStatus: 1 });
  await settle(500);
  s.host.stopUnit = stopUnit;
  assert.equal(s.started.length, 2, 'started again once the old service was gone');
  assert.equal(rec(s, a.id)?.lifecycle, 'running');
  assert.ok(s.units.has(service));
});

test('stop: its timer and its service only; its output no longer followed; later unit events ignored', async (t) => {
  const s = setup(t);
  const a = await s.m.start('fix', { type: 'poll', argv: ['cat', '/tmp/x'], intervalS: 10 });
  const out = s.started[0].serviceProps.get('StandardOutputFileToAppend');
  await s.m.stop('fix', a.handle);
  assert.deepEqual(s.stopped, [`sb-monitor-${a.id}.timer`, `sb-monitor-${a.id}.service`]);
  assert.equal(s.watched.has(out), false);
  await s.tick(a.id, { result: 'exit-code', execMainStatus: 1 });
  assert.equal(rec(s, a.id)?.lifecycle, 'stopped');
  assert.deepEqual(s.notices, []);
});

test('a timer stopped behind sbd\'s back is said, not hidden', async (t) => {
  const s = setup(t);
  const a = await s.m.start('fix', { type: 'poll', argv: ['cat', '/tmp/x'], intervalS: 10, label: 'x' });
  const timer = `sb-monitor-${a.id}.timer`;
  await s.m.onUnit(timer);
  assert.equal(rec(s, a.id)?.lifecycle, 'running', 'a timer that waits is fine');
  s.units.delete(timer);
  await s.m.onUnit(timer);
  assert.equal(rec(s, a.id)?.lifecycle, 'gone');
  assert.deepEqual(s.notices.map((n) => [n.kind, n.text]), [['gone', 'x: its timer was stopped outside sbd: no more ticks']]);
});

test('ssh: a poll of ssh found on sbd\'s PATH with its options, the host, -- and the words', async (t) => {
  const s = setup(t);
  const a = await s.m.start('fix', { type: 'ssh', host: 'ann@gpu1', argv: ['nvidia-smi', '--query-gpu=utilization.gpu', '--format=csv'], intervalS: 20, timeoutS: 8 });
  assert.equal(a.answer, 'created');
  assert.deepEqual(s.started[0].serviceProps.get('ExecStart'), [['/usr/bin/ssh', ['ssh', '-o', 'BatchMode=yes', '-o', 'ConnectTimeout=4', 'ann@gpu1', '--', 'nvidia-smi', '--query-gpu=utilization.gpu', '--format=csv'], false]]);
  await s.tick(a.id, { result: 'exit-code', execMainStatus: 255 });
  assert.match(s.notices[0].text, /exited with status 255 \(ssh itself failed/);
  const before = s.started.length;
  const q = await s.m.start('fix', { type: 'ssh', host: 'gpu1', argv: ['cat', '$HOME/status'], intervalS: 20 });
  assert.equal(q.answer, 'quarantined');
  assert.match(q.reason ?? '', /word 2 "\$HOME\/status" has a character the remote shell would read/);
  assert.equal(s.started.length, before, 'nothing ran for it');
});

test('ssh missing on sbd\'s PATH, a poll\'s program missing: said, and the monitor is not left running', async (t) => {
  const s = setup(t, { programs: [] });
  await assert.rejects(s.m.start('fix', { type: 'ssh', host: 'gpu1', argv: ['uptime'], intervalS: 20 }), (e) => e instanceof MonitorRequestError && /"ssh", which is not on sbd's PATH: install the OpenSSH client/.test(e.message));
  await assert.rejects(s.m.start('fix', { type: 'poll', argv: ['nosuchprobe'], intervalS: 20 }), /"nosuchprobe" is not on sbd's PATH/);
  assert.deepEqual(s.m.list('fix').map((r) => r.lifecycle), ['gone', 'gone']);
  assert.deepEqual(s.started, []);
});

test('a poll asked for after READY, before recovery (adoption outlasted READY), is the new sbd\'s own: left running, its timer not stopped', async (t) => {
  const s = setup(t);
  const old = await s.m.start('fix', { type: 'poll', argv: ['cat', '/tmp/old'], intervalS: 10 });
  s.m.close();
  s.started.length = 0;
  s.stopped.length = 0;
  const again = new MonitorManager(s.host);
  t.after(() => again.close());
  // a request to the restarted sbd while it still adopts: its record is saved to disk at once
  const fresh = await again.start('fix', { type: 'poll', argv: ['cat', '/tmp/new'], intervalS: 10 });
  const { records, corrupt } = again.loadAll();
  assert.deepEqual(records.map((r) => r.id), [old.id], 'only the record from before the restart is recovery\'s');
  again.apply(planRecovery(records.map((r) => ({ id: r.id, type: r.spec.type, lifecycle: r.lifecycle, sessionLive: true })), corrupt, Date.now()));
  await settle(50);
  const of = (id) => again.list('fix').find((r) => r.id === id);
  assert.equal(of(fresh.id)?.lifecycle, 'running');
  assert.equal(s.stopped.includes(`sb-monitor-${fresh.id}.timer`), false, 'the new poll\'s timer is not stopped');
  assert.equal(s.units.get(`sb-monitor-${fresh.id}.timer`)?.activeState, 'active');
  assert.equal(of(old.id)?.lifecycle, 'awaiting-confirmation', 'the poll from before the restart awaits confirmation as ever');
});

test('a record changed by a request between its loading and the plan\'s apply keeps the request\'s outcome', async (t) => {
  const s = setup(t);
  const old = await s.m.start('fix', { type: 'poll', argv: ['cat', '/tmp/old'], intervalS: 10 });
  s.m.close();
  const again = new MonitorManager(s.host);
  t.after(() => again.close());
  const { records, corrupt } = again.loadAll();
  const plan = planRecovery(records.map((r) => ({ id: r.id, type: r.spec.type, lifecycle: r.lifecycle, sessionLive: true })), corrupt, Date.now());
  await again.stop('fix', old.id); // the agent stopped it while recovery read the units
  s.started.length = 0;
  again.apply(plan);
  await settle(50);
  assert.equal(again.list('fix').find((r) => r.id === old.id)?.lifecycle, 'stopped');
  assert.deepEqual(s.started, [], 'nothing started again');
});

test('after sbd restarts: a local poll awaits confirmation with its timer stopped; ssh resumes; restartPoll runs a poll again', async (t) => {
  const s = setup(t);
  const p = await s.m.start('fix', { type: 'poll', argv: ['cat', '/tmp/x'], intervalS: 10 });
  const h = await s.m.start('fix', { type: 'ssh', host: 'gpu1', argv: ['uptime'], intervalS: 10 });
  s.m.close();
  s.units.delete(`sb-monitor-${h.id}.timer`); // the ssh probe's timer did not survive (say, a reboot of the user manager)
  s.units.delete(`sb-monitor-${h.id}.service`);
  s.started.length = 0;
  s.stopped.length = 0;
  const again = new MonitorManager(s.host);
  t.after(() => again.close());
  const { records, corrupt } = again.loadAll();
  const plan = planRecovery(records.map((r) => ({ id: r.id, type: r.spec.type, lifecycle: r.lifecycle, sessionLive: true })), corrupt, Date.now());
  again.apply(plan);
  await settle(50);
  const of = (id) => again.list('fix').find((r) => r.id === id);
  assert.equal(of(p.id)?.lifecycle, 'awaiting-confirmation');
  assert.ok(s.stopped.includes(`sb-monitor-${p.id}.timer`), 'the local poll\'s timer is stopped');
  assert.equal(s.units.has(`sb-monitor-${p.id}.timer`), false);
  assert.equal(of(h.id)?.lifecycle, 'running');
  assert.deepEqual(s.started.map((x) => x.timer), [`sb-monitor-${h.id}.timer`], 'the ssh probe\'s timer started again');
  // recover approve (another part of issue 13) runs it again by restartPoll
  const kit = /** @type {any} */ (again).kit;
  await restartPoll(kit, of(p.id));
  assert.equal(of(p.id)?.lifecycle, 'running');
  assert.equal(of(p.id)?.reason, undefined);
  assert.equal(s.started.at(-1)?.timer, `sb-monitor-${p.id}.timer`);
});
