// @ts-check
'use strict';
// Issue 13: the lifecycle over sbd's typed interface and sbctl's side of it, on a bus in memory:
// recover (list, approve, reject), inspect (a{sv} back into the receipt), stop --all (refused
// without --confirm: exit 2 and what it would stop; with it, this session's only), gc (dry run,
// apply), and the handles a completion offers (nothing when sbd is not there).
const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const path = require('node:path');
const { spawnSync } = require('node:child_process');
const { FakeBroker } = require('../../support/fake-bus');
const { fakeMonitorHost } = require('../../support/monitor-host');
const { exportService } = require('../../../dist/daemon/bus-service.js');
const { MonitorManager } = require('../../../dist/monitor/manager.js');
const { monitorRecoverList, monitorRecover, monitorInspect, monitorStopAll, monitorGc } = require('../../../dist/cli/monitor.js');
const { completeHandles, bashCompletion } = require('../../../dist/cli/completion.js');
const { buildProgram } = require('../../../dist/cli/program.js');

async function setup(t) {
  const f = fakeMonitorHost(t);
  const m = new MonitorManager(f.host);
  const broker = new FakeBroker();
  const sbd = await broker.connect();
  await exportService(sbd, { health: () => ({}), sessions: () => [], slices: () => undefined }, m);
  const client = await broker.connect();
  t.after(() => { m.close(); sbd.disconnect(); client.disconnect(); });
  /** @type {string[]} */
  const out = [];
  /** @type {string[]} */
  const err = [];
  return { ...f, m, broker, client, out, err, say: (l) => out.push(l), warn: (l) => err.push(l), env: { ...process.env, SESSIONBRAKE_SESSION: 'fix' } };
}

async function quarantine(s, label) {
  const a = await s.m.start('fix', { type: 'spawn', argv: ['node', 'crash.js'], label });
  const unit = `sb-monitor-${a.id}.service`;
  s.units.set(unit, { ...s.units.get(unit), activeState: 'failed', result: 'start-limit-hit', execMainCode: 1, execMainStatus: 3, mainPid: 0 });
  await s.m.onUnit(unit);
  return { ...a, unit };
}

test('recover: what waits, approve, reject, and a bad handle as exit 2', async (t) => {
  const s = await setup(t);
  const a = await quarantine(s, 'a');
  const b = await quarantine(s, 'b');
  await monitorRecoverList(s.client, undefined, true, s.env, s.say);
  assert.deepEqual(JSON.parse(s.out[0]).map((w) => [w.handle, w.label, w.lifecycle]), [[a.handle, 'a', 'quarantined'], [b.handle, 'b', 'quarantined']]);
  await monitorRecover(s.client, 'approve', undefined, a.handle, true, s.env, s.say);
  assert.deepEqual(JSON.parse(s.out[1]), { handle: a.handle, lifecycle: 'running' });
  await monitorRecover(s.client, 'reject', undefined, 'b', true, s.env, s.say);
  const rejected = JSON.parse(s.out[2]);
  assert.equal(rejected.lifecycle, 'rejected');
  assert.ok(fs.existsSync(rejected.archivedTo));
  await monitorRecoverList(s.client, undefined, false, s.env, s.say);
  assert.equal(s.out[3], 'nothing waits');
  await assert.rejects(monitorRecover(s.client, 'approve', undefined, a.handle, false, s.env, s.say), (e) => e.exitCode === 2 && /is running, not waiting/.test(e.message));
});

test('inspect: the receipt through a{sv}, as JSON and for people', async (t) => {
  const s = await setup(t);
  const a = await s.m.start('fix', { type: 'spawn', argv: ['vite'], label: 'dev' });
  await monitorInspect(s.client, undefined, 'dev', true, s.env, s.say);
  const x = JSON.parse(s.out[0]);
  assert.equal(x.id, a.id);
  assert.equal(x.unit.mainPid, s.units.get(`sb-monitor-${a.id}.service`).mainPid);
  assert.deepEqual(x.signalsSent, []);
  assert.equal(x.expiresAt, null);
  assert.equal(x.exit, null);
  await monitorInspect(s.client, undefined, a.handle, false, s.env, s.say);
  assert.match(s.out[1], /^main pid: +\d+$/m);
});

test('stop --all: without --confirm exit 2, what it would stop, nothing stopped; with it, this session\'s only', async (t) => {
  const s = await setup(t);
  const a = await s.m.start('fix', { type: 'spawn', argv: ['sleep', '1000'], label: 'a' });
  const b = await s.m.start('fix', { type: 'tail', path: path.join(s.dir, 'b.log') });
  const theirs = await s.m.start('other', { type: 'spawn', argv: ['sleep', '1000'] });
  assert.equal(await monitorStopAll(s.client, undefined, false, true, s.env, s.say, s.warn), 2);
  assert.deepEqual(JSON.parse(s.out[0]).wouldStop.map((m) => m.handle), [a.handle, b.handle]);
  assert.match(s.err[0], /refused without --confirm; it would stop the 2 monitors of session fix above \(no other session's\)/);
  assert.equal(s.m.get(a.id)?.lifecycle, 'running', 'nothing stopped');
  assert.equal(await monitorStopAll(s.client, undefined, true, true, s.env, s.say, s.warn), 0);
  assert.deepEqual(JSON.parse(s.out[1]), { session: 'fix', confirmed: true, stopped: [{ handle: a.handle, lifecycle: 'stopped' }, { handle: b.handle, lifecycle: 'stopped' }] });
  assert.equal(s.m.get(theirs.id)?.lifecycle, 'running');
});

test('gc over the bus: a dry run lists, --apply archives', async (t) => {
  const s = await setup(t);
  const o = await s.m.start('other', { type: 'tail', path: path.join(s.dir, 'o.log') });
  s.sessions.delete('other');
  await monitorGc(s.client, false, true, s.say);
  assert.deepEqual(JSON.parse(s.out[0]), { applied: false, entries: [{ kind: 'orphan', what: o.handle, id: o.id, why: 'its session "other" has ended', archivedTo: null }] });
  await monitorGc(s.client, false, false, s.say);
  assert.match(s.out[1], /orphan +\S+ +archive +its session "other" has ended/);
  await monitorGc(s.client, true, true, s.say);
  assert.ok(fs.existsSync(JSON.parse(s.out[3]).entries[0].archivedTo));
  assert.equal(s.m.get(o.id), undefined);
});

test('completion: the handles of the set asked; quietly nothing without sbd or a session', async (t) => {
  const s = await setup(t);
  const q = await quarantine(s, 'q');
  const r = await s.m.start('fix', { type: 'tail', path: path.join(s.dir, 'r.log') });
  const gone = await s.m.start('fix', { type: 'tail', path: path.join(s.dir, 'g.log') });
  await s.m.stop('fix', gone.handle);
  const handles = async (set, session = 'fix', connect = () => s.broker.connect()) => {
    const got = [];
    assert.equal(await completeHandles(connect, session, set, (l) => got.push(l)), 0);
    return got;
  };
  assert.deepEqual(await handles('waiting'), [q.handle]);
  assert.deepEqual(await handles('live'), [q.handle, r.handle]);
  assert.deepEqual(await handles('all'), [q.handle, r.handle, gone.handle]);
  assert.deepEqual(await handles('all', ''), [], 'no session known');
  const lonely = new FakeBroker(); // no sbd on this bus
  assert.deepEqual(await handles('all', 'fix', () => lonely.connect()), []);
  assert.deepEqual(await handles('all', 'fix', async () => { throw new Error('no bus'); }), []);
});

test('the bash script: valid bash, made from sbctl\'s own commands, completing monitor handles', () => {
  const script = bashCompletion(buildProgram(() => {}));
  const r = spawnSync('bash', ['-n'], { input: script, encoding: 'utf8' });
  assert.equal(r.status, 0, r.stderr);
  assert.match(script, /words="run status watch monitor completion inbox reap holders install uninstall doctor help"/);
  assert.match(script, /words="start tail poll ssh http file process list stop inspect recover gc"/);
  assert.match(script, /stop\) opts="--session --all --confirm --json" ;;/);
  assert.match(script, /recover\)\n\s+if \(\(\$\{#args\[@\]\} == 2\)\); then words="approve reject"\n\s+elif \(\(\$\{#args\[@\]\} == 3\)\); then words="\$\(__sbctl_handles waiting\)"/);
  assert.doesNotMatch(script, /complete-handles\) opts/, 'the hidden helper is not offered');
  // driven as bash drives it, with a stand-in sbctl that answers complete-handles
  const dir = fs.mkdtempSync(path.join(require('node:os').tmpdir(), 'sb-compl-'));
  const fake = path.join(dir, 'sbctl');
  fs.writeFileSync(fake, '#!/bin/sh\n[ "$1" = complete-handles ] && echo "$3:$5"\n', { mode: 0o755 });
  const drive = (line) => spawnSync('bash', ['-c', `${script}\nCOMP_WORDS=(${line}); COMP_CWORD=$((\${#COMP_WORDS[@]} - 1)); _sbctl; printf '%s\\n' "\${COMPREPLY[@]}"`], { encoding: 'utf8' }).stdout.trim();
  assert.equal(drive(`${fake} monitor recover approve ''`), 'waiting:');
  assert.equal(drive(`${fake} monitor --session s1 stop ''`), 'live:s1');
  assert.equal(drive(`${fake} monitor ins`), 'inspect');
  assert.equal(drive(`${fake} monitor stop --co`), '--confirm');
  fs.rmSync(dir, { recursive: true, force: true });
});
