// @ts-check
'use strict';
// Issue 13: sbctl monitor talks to sbd's typed interface (StartMonitor with the request as a{sv},
// ListMonitors, StopMonitor); a bad request comes back as exit code 2 with sbd's words, and a
// spawn's program is resolved on the caller's PATH. On a bus in memory (test/support/fake-bus.js).
const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { FakeBroker } = require('../../support/fake-bus');
const { exportService } = require('../../../dist/daemon/bus-service.js');
const { MonitorManager } = require('../../../dist/monitor/manager.js');
const { monitorStart, monitorList, monitorStop } = require('../../../dist/cli/monitor.js');

async function setup(t) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sb-busmon-'));
  const started = [];
  const m = new MonitorManager({
    recordsDir: path.join(dir, 'records'), outputDir: path.join(dir, 'out'),
    startTransientService: async (name, props) => { started.push({ name, props: new Map(props.map(([n, , v]) => [n, v])) }); },
    stopUnit: async () => {}, getUnit: async () => undefined,
    watchFile: () => {}, unwatchFile: () => {},
    session: (id) => (id === 'fix' ? { id: 'fix', unit: 'sb-fix.scope', invocationId: 'a'.repeat(32), slice: 'sessions.slice', memoryHigh: 2 ** 29 } : undefined),
    owner: { busName: ':1.1', epoch: 1 }, notify: (_s, n) => ({ ...n, id: 1 }), resolveProgram: () => undefined, monotonicMs: () => performance.now(), log: () => {},
  });
  const broker = new FakeBroker();
  const sbd = await broker.connect();
  await exportService(sbd, { health: () => ({}), sessions: () => [], slices: () => undefined }, m);
  const client = await broker.connect();
  t.after(() => { m.close(); sbd.disconnect(); client.disconnect(); fs.rmSync(dir, { recursive: true, force: true }); });
  const out = [];
  return { client, started, out, say: (l) => out.push(l), env: { ...process.env, SESSIONBRAKE_SESSION: 'fix' } };
}

test('start a spawn: typed request, program resolved on the caller\'s PATH, answer and handle back', async (t) => {
  const s = await setup(t);
  assert.equal(await monitorStart(s.client, undefined, { type: 'spawn', argv: ['node', '-e', 'setInterval(()=>{},1000)'], label: 'dev', notifyOn: ['ERROR'], maxLines: 3 }, true, s.env, s.say), 0);
  const answer = JSON.parse(s.out[0]);
  assert.equal(answer.answer, 'created');
  assert.match(answer.handle, /^[0-9a-f]{8}$/);
  const exec = s.started[0].props.get('ExecStart');
  assert.ok(path.isAbsolute(exec[0][0]) && exec[0][0].endsWith('/node'), `the program by its absolute path: ${exec[0][0]}`);
  await monitorList(s.client, undefined, false, true, s.env, s.say);
  const listed = JSON.parse(s.out[1]);
  assert.deepEqual(listed.map((x) => [x.label, x.type, x.lifecycle, x.session]), [['dev', 'spawn', 'running', 'fix']]);
  await monitorStop(s.client, undefined, answer.handle, true, s.env, s.say);
  assert.deepEqual(JSON.parse(s.out[2]), { handle: answer.handle, lifecycle: 'stopped' });
});

test('a poll with work in it comes back quarantined with the reason', async (t) => {
  const s = await setup(t);
  await monitorStart(s.client, undefined, { type: 'poll', argv: ['npm', 'install'], intervalS: 30 }, false, s.env, s.say);
  assert.match(s.out[0], /^quarantined [0-9a-f]{8}: "npm install" is work/);
});

test('bad requests: sbd\'s words as a usage error (exit 2); a program not on PATH said before asking', async (t) => {
  const s = await setup(t);
  await assert.rejects(monitorStart(s.client, 'nobody', { type: 'tail', path: '/tmp/x.log' }, false, s.env, s.say), (e) => e.exitCode === 2 && /no session "nobody"/.test(e.message));
  await assert.rejects(monitorStart(s.client, undefined, { type: 'tail', path: '/tmp/x.log', maxLines: 500 }, false, s.env, s.say), (e) => e.exitCode === 2 && /maxLines/.test(e.message));
  await assert.rejects(monitorStart(s.client, undefined, { type: 'spawn', argv: ['no-such-program-sb'] }, false, s.env, s.say), (e) => e.exitCode === 2 && /not an executable on your PATH/.test(e.message));
  await assert.rejects(monitorStop(s.client, undefined, 'zzzz', false, s.env, s.say), (e) => e.exitCode === 2 && /no monitor "zzzz"/.test(e.message));
});
