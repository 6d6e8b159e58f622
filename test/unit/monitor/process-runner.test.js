// @ts-check
'use strict';
// Issue 13: the process monitor against real processes: found by pid file or by exact name, its
// exit told from a pidfd, never signalled (a stop leaves it running), a name several processes
// have refused with their pids, a process of another user refused; after a restart it resumes
// only when the pid is still the same process (same start time), else it is told gone.
const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const path = require('node:path');
const { spawn } = require('node:child_process');
const { fakeHost, until } = require('./fake-host');
const { MonitorRequestError } = require('../../../dist/monitor/manager.js');
const { namedExactly, pidOfFile } = require('../../../dist/monitor/runners/process.js');

const alive = (pid) => {
  try {
    return !/\) Z /.test(fs.readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return false;
  }
};

/** A `sleep` child run under the name `name` (its comm), killed after the test. */
async function sleeper(t, dir, name = 'sleep') {
  let bin = '/bin/sleep';
  if (name !== 'sleep') {
    bin = path.join(dir, name);
    fs.symlinkSync('/bin/sleep', bin);
  }
  const child = spawn(bin, ['600'], { stdio: 'ignore' });
  t.after(() => child.kill('SIGKILL'));
  const pid = /** @type {number} */ (child.pid);
  await until(() => { try { return fs.readFileSync(`/proc/${pid}/comm`, 'utf8').trim() === name; } catch { return false; } }, `${name} to exec`);
  return { child, pid };
}

test('by pid file: the exit is told once, from the pidfd', async (t) => {
  const h = fakeHost(t);
  const s = await sleeper(t, h.dir);
  const pidFile = path.join(h.dir, 'app.pid');
  fs.writeFileSync(pidFile, `${s.pid}\n`);
  const a = await h.m.start('fix', { type: 'process', pidFile, label: 'app' });
  assert.equal(a.answer, 'created');
  const r = h.record(a.id);
  assert.equal(r?.process?.pid, s.pid);
  assert.equal(r?.process?.comm, 'sleep');
  assert.equal(r?.process?.startTicks, Number(fs.readFileSync(`/proc/${s.pid}/stat`, 'utf8').split(') ')[1]?.split(' ')[19]));
  assert.deepEqual(h.notices, []);
  s.child.kill('SIGTERM');
  await until(() => h.notices.length > 0, 'the exit notice');
  assert.deepEqual(h.notices.map((n) => [n.kind, n.text]), [['exit', `app: process ${s.pid} (sleep) exited`]]);
  assert.equal(h.record(a.id)?.lifecycle, 'stopped');
});

test('stop leaves the observed process running: it is never signalled', async (t) => {
  const h = fakeHost(t);
  const s = await sleeper(t, h.dir);
  const pidFile = path.join(h.dir, 'app.pid');
  fs.writeFileSync(pidFile, String(s.pid));
  const a = await h.m.start('fix', { type: 'process', pidFile });
  await h.m.stop('fix', a.handle);
  await new Promise((r) => setTimeout(r, 100));
  assert.ok(alive(s.pid), 'still running after the stop');
  assert.deepEqual(h.notices, [], 'no exit told');
});

test('by name: exactly the comm; one process is taken, several are refused with their pids, none is said', async (t) => {
  const h = fakeHost(t);
  const name = `sbprobe${process.pid % 100000}`;
  const one = await sleeper(t, h.dir, name);
  const a = await h.m.start('fix', { type: 'process', match: name });
  assert.equal(h.record(a.id)?.process?.pid, one.pid);
  const other = await sleeper(t, fs.mkdtempSync(path.join(h.dir, 'b')), name);
  const pids = [one.pid, other.pid].sort((x, y) => x - y);
  await assert.rejects(h.m.start('fix', { type: 'process', match: name, reuse: 'parallel' }),
    (e) => e instanceof MonitorRequestError && e.message === `"${name}" names 2 processes of yours (pids ${pids.join(', ')}): give the one meant with --pid-file, or a name only it has`);
  await assert.rejects(h.m.start('fix', { type: 'process', match: `${name}x` }), /no process of yours is named/);
  await assert.rejects(h.m.start('fix', { type: 'process', match: 'a-name-longer-than-15' }), /at most 15 characters/);
  assert.ok(alive(one.pid) && alive(other.pid));
});

test('refused: a pid file that is missing or holds no pid, a pid that runs nothing, a process of another user', async (t) => {
  const h = fakeHost(t);
  const pidFile = path.join(h.dir, 'x.pid');
  await assert.rejects(h.m.start('fix', { type: 'process', pidFile }), /the pid file .* does not exist/);
  fs.writeFileSync(pidFile, 'twelve\n');
  await assert.rejects(h.m.start('fix', { type: 'process', pidFile, reuse: 'parallel' }), /holds no pid/);
  fs.writeFileSync(pidFile, '4194304\n'); // above pid_max's ceiling: never a process
  await assert.rejects(h.m.start('fix', { type: 'process', pidFile, reuse: 'parallel' }), /no process 4194304 is running/);
  if (process.getuid?.() !== 0) {
    fs.writeFileSync(pidFile, '1\n');
    await assert.rejects(h.m.start('fix', { type: 'process', pidFile, reuse: 'parallel' }), /process 1 \(.*\) is not yours \(uid 0\)/);
  }
  assert.ok(h.m.list('fix').every((r) => r.lifecycle === 'gone'), 'a refused monitor runs nothing');
});

test('after a restart: the same process (same start time) is observed again; a pid now another process\'s is told gone', async (t) => {
  const h = fakeHost(t);
  const s = await sleeper(t, h.dir);
  const pidFile = path.join(h.dir, 'app.pid');
  fs.writeFileSync(pidFile, String(s.pid));
  const same = await h.m.start('fix', { type: 'process', pidFile, label: 'same' });
  const other = await h.m.start('fix', { type: 'process', pidFile, label: 'other', reuse: 'parallel' });
  h.m.close();
  // the second record as if its process had ended and the pid been taken by another since
  const file = path.join(h.dir, 'records', `${other.id}.json`);
  const rec = JSON.parse(fs.readFileSync(file, 'utf8'));
  fs.writeFileSync(file, JSON.stringify({ ...rec, process: { ...rec.process, startTicks: rec.process.startTicks - 1 } }));
  const again = fakeHost(t, { dir: h.dir });
  again.m.loadAll();
  again.m.apply({ actions: [same, other].map((x) => ({ id: x.id, action: 'resume', why: '' })), summary: '' });
  assert.equal(again.record(other.id)?.lifecycle, 'gone');
  assert.deepEqual(again.notices.map((n) => [n.kind, n.text]), [['gone', `other: process ${s.pid} (sleep) is gone: it ended while sbd was away`]]);
  assert.equal(again.record(same.id)?.lifecycle, 'running');
  assert.ok(alive(s.pid), 'a resume does not touch the process');
  s.child.kill('SIGTERM');
  await until(() => again.notices.length === 2, 'the exit after the restart');
  assert.equal(again.notices[1].text, `same: process ${s.pid} (sleep) exited`);
});

test('pure parts: the pid of a pid file; the pids of a name', () => {
  assert.equal(pidOfFile(' 1234\n', '/run/x.pid'), 1234);
  assert.throws(() => pidOfFile('12 34', '/run/x.pid'), /the pid file \/run\/x.pid holds no pid/);
  assert.throws(() => pidOfFile('0', '/run/x.pid'), /holds no pid/);
  assert.deepEqual(namedExactly([{ pid: 9, comm: 'node' }, { pid: 3, comm: 'node' }, { pid: 4, comm: 'nodejs' }], 'node'), [3, 9]);
});
