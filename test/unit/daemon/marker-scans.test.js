// @ts-check
'use strict';
// The leftover reaper's marker scans, gathered (issue 15, item 5): two hundred sessions ending
// together scanned /proc two hundred times, back to back, and systemd's watchdog killed sbd.
// Sessions ending within MARKER_SCAN_GATHER_MS now share one pass.
const test = require('node:test');
const assert = require('node:assert/strict');
const { spawnSync } = require('node:child_process');
const { MarkerScans, MARKER_SCAN_GATHER_MS } = require('../../../dist/daemon/marker-scans.js');
const { LeftoverReaper } = require('../../../dist/daemon/leftovers.js');
const { parseConfig } = require('../../../dist/config/load.js');

const proc = (pid) => ({ pid, ppid: 1, comm: `p${pid}`, uid: 1000, rssBytes: 4096, cpuTicks: 0, startTicks: 1, argv: [] });

test('finds within the gather share one pass, each id gets its own processes', async (t) => {
  t.mock.timers.enable({ apis: ['setTimeout'] });
  const asked = [];
  const scans = new MarkerScans((ids) => {
    asked.push([...ids].sort());
    return new Map([['a', [proc(1)]], ['b', [proc(2), proc(3)]]]);
  });
  const a = scans.find('a');
  const b = scans.find('b');
  const c = scans.find('c');
  const a2 = scans.find('a');
  assert.equal(scans.passes, 0, 'no pass before the gather time');
  t.mock.timers.tick(MARKER_SCAN_GATHER_MS);
  assert.deepEqual((await a).map((p) => p.pid), [1]);
  assert.deepEqual((await b).map((p) => p.pid), [2, 3]);
  assert.deepEqual(await c, [], 'an id nothing carries: none');
  assert.deepEqual((await a2).map((p) => p.pid), [1]);
  assert.deepEqual(asked, [['a', 'b', 'c']]);
  const later = scans.find('b');
  t.mock.timers.tick(MARKER_SCAN_GATHER_MS);
  assert.deepEqual((await later).map((p) => p.pid), [2, 3]);
  assert.equal(scans.passes, 2, 'a find after a pass starts the next one');
});

test('a failed pass fails every find that waited on it, and the next pass runs', async (t) => {
  t.mock.timers.enable({ apis: ['setTimeout'] });
  let fail = true;
  const scans = new MarkerScans(() => {
    if (fail) throw new Error('/proc: EMFILE');
    return new Map();
  });
  const a = scans.find('a');
  const b = scans.find('b');
  t.mock.timers.tick(MARKER_SCAN_GATHER_MS);
  await assert.rejects(a, /EMFILE/);
  await assert.rejects(b, /EMFILE/);
  fail = false;
  const c = scans.find('c');
  t.mock.timers.tick(MARKER_SCAN_GATHER_MS);
  assert.deepEqual(await c, []);
});

test('the reaper: sessions whose agents exited together share one pass over /proc', async () => {
  const config = parseConfig({ observeOnly: true }, 'test');
  const told = [];
  const passes = [];
  const scans = new MarkerScans((ids) => {
    passes.push([...ids].sort());
    return new Map([...ids].map((id, i) => [id, [proc(90000 + i)]]));
  });
  const reaper = new LeftoverReaper(config, { tell: (i) => told.push(i) }, (s, err) => assert.fail(`${s.unit}: ${err}`), scans);
  // agents that have exited already (a finished child's pid): each is reaped at once
  const gone = spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))'], { encoding: 'utf8' });
  const agentPid = Number(gone.stdout);
  const sessions = ['s1', 's2', 's3'].map((id) => ({ unit: `${id}.scope`, id, agentPid, agentStartTicks: 1, cgroupDir: `/nonexistent/${id}.scope`, reap: true }));
  for (const s of sessions) reaper.watch(s);
  for (let i = 0; i < 50 && told.length < 3; i++) await new Promise((r) => setTimeout(r, 20));
  assert.deepEqual(passes, [['s1', 's2', 's3']], 'one pass for the three');
  assert.deepEqual(told.map((i) => [i.type, i.session, i.procs.map((p) => p.pid).length]).sort(), [['leftovers', 's1', 1], ['leftovers', 's2', 1], ['leftovers', 's3', 1]]);
});

test("the reaper leaves a monitor's own unit (a spawn, a poll's tick) alone: its main process is the monitor's work, and the next one starts in the same cgroup", async () => {
  const config = parseConfig({}, 'test');
  const told = [];
  const scans = new MarkerScans((ids) => new Map([...ids].map((id) => [id, [proc(90100)]])));
  const reaper = new LeftoverReaper(config, { tell: (i) => told.push(i) }, (s, err) => assert.fail(`${s.unit}: ${err}`), scans);
  const gone = spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))'], { encoding: 'utf8' });
  const agentPid = Number(gone.stdout);
  const id = '987bdc29-0873-4b71-a51a-ed63e5def690';
  const tick = { unit: `sb-monitor-${id}.service`, id: `sb-monitor-${id}`, agentPid, agentStartTicks: 1, cgroupDir: `/nonexistent/sb-monitor-${id}.service`, reap: true };
  reaper.watch(tick);
  const session = { unit: 'plain.scope', id: 'plain', agentPid, agentStartTicks: 1, cgroupDir: '/nonexistent/plain.scope', reap: true };
  reaper.watch({ ...session, reap: false }); // a session's exited agent, told (reap off): the reaper did look
  for (let i = 0; i < 50 && told.length < 1; i++) await new Promise((r) => setTimeout(r, 20));
  await new Promise((r) => setTimeout(r, 100));
  assert.deepEqual(told.map((i) => i.session), ['plain'], 'the session was looked at; the monitor\'s unit never');
  reaper.forget(tick);
  await new Promise((r) => setTimeout(r, 100));
  assert.deepEqual(told.map((i) => i.session), ['plain'], 'nor when its unit goes');
});
