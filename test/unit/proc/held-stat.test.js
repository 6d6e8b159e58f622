// @ts-check
'use strict';
// HeldStats on this host's real /proc: a stat held open reads fresh figures at each read, names
// the process it was opened for (ESRCH once that one exited: undefined), and is closed on release.
const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { spawn } = require('node:child_process');
const { once } = require('node:events');
const { HeldStats } = require('../../../dist/proc/held-stat.js');

const openFds = () => fs.readdirSync('/proc/self/fd').length;

test('a held stat is read afresh each time: a spinning child\'s CPU ticks grow between two reads of one fd', async (t) => {
  const c = spawn(process.execPath, ['-e', 'for (;;) {}'], { stdio: 'ignore' });
  t.after(() => c.kill('SIGKILL'));
  await once(c, 'spawn');
  const stats = new HeldStats();
  const before = openFds();
  const first = stats.read('a.scope', /** @type {number} */ (c.pid));
  assert.equal(first?.pid, c.pid);
  assert.equal(stats.size, 1);
  assert.equal(openFds(), before + 1, 'one fd held');
  const until = Date.now() + 10_000;
  let later = first;
  while (later && first && later.cpuTicks === first.cpuTicks && Date.now() < until) {
    await new Promise((r) => setTimeout(r, 100));
    later = stats.read('a.scope', /** @type {number} */ (c.pid));
  }
  assert.ok(later && first && later.cpuTicks > first.cpuTicks, `ticks ${first?.cpuTicks} then ${later?.cpuTicks}`);
  assert.equal(openFds(), before + 1, 'the same fd, read again');
  stats.release('a.scope');
  assert.equal(stats.size, 0);
  assert.equal(openFds(), before, 'released: closed');
});

test('once the process exits (and is reaped) its held stat reads as gone and the fd is closed; a pid never seen is gone too', async () => {
  const c = spawn('sleep', ['30'], { stdio: 'ignore' });
  await once(c, 'spawn');
  const stats = new HeldStats();
  const before = openFds();
  assert.equal(stats.read('b.scope', /** @type {number} */ (c.pid))?.comm, 'sleep');
  c.kill('SIGKILL');
  await once(c, 'exit'); // reaped by node: the pid is free, and the fd names a process that is no more
  assert.equal(stats.read('b.scope', /** @type {number} */ (c.pid)), undefined);
  assert.equal(stats.size, 0, 'released at ESRCH');
  assert.equal(openFds(), before);
  assert.equal(stats.read('c.scope', 2 ** 22 + 1), undefined, 'a pid above pid_max: no such process');
});

test('a new pid under the same key closes the old fd; releaseAll closes every one', async (t) => {
  const a = spawn('sleep', ['30'], { stdio: 'ignore' });
  const b = spawn('sleep', ['30'], { stdio: 'ignore' });
  t.after(() => { a.kill('SIGKILL'); b.kill('SIGKILL'); });
  await Promise.all([once(a, 'spawn'), once(b, 'spawn')]);
  const stats = new HeldStats();
  const before = openFds();
  stats.read('k.scope', /** @type {number} */ (a.pid));
  assert.equal(stats.read('k.scope', /** @type {number} */ (b.pid))?.pid, b.pid);
  assert.equal(openFds(), before + 1, 'the first closed');
  stats.read('l.scope', /** @type {number} */ (a.pid));
  stats.releaseAll();
  assert.equal(stats.size, 0);
  assert.equal(openFds(), before);
});

test('a stat whose content is not a stat line is a precise error naming the file', () => {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'sb-held-'));
  fs.mkdirSync(path.join(root, '42'));
  fs.writeFileSync(path.join(root, '42', 'stat'), 'garbage\n');
  assert.throws(() => new HeldStats(root).read('x.scope', 42), { name: 'ProcFormatError', message: new RegExp(`${root}/42/stat: unexpected content`) });
});

test('a stat longer than the read buffer is read (the shared buffer grows), not refused', () => {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'sb-held-'));
  fs.mkdirSync(path.join(root, '43'));
  // 20,000 bytes, more than twice the shared buffer (util/read-again.ts reads it whole)
  const fields = Array.from({ length: 10_000 }, (_, i) => (i === 18 ? '777' : '1'));
  fs.writeFileSync(path.join(root, '43', 'stat'), `43 (x) S ${fields.join(' ')}\n`);
  const st = new HeldStats(root).read('y.scope', 43);
  assert.equal(st?.pid, 43);
  assert.equal(st?.startTicks, 777);
});
