// @ts-check
'use strict';
const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { readMemorySample, SampleFiles, CgroupGoneError, cgroupDir } = require('../../../dist/cgroup/read.js');

const fixture = path.resolve(__dirname, '../../fixtures/cgroup/sessions.slice/wedged.scope');

test('a memory sample is read from a (fake) cgroup directory', () => {
  const s = readMemorySample(fixture, 1016);
  assert.deepEqual(s, {
    atMs: 1016, currentBytes: 69033984, highBytes: 67108864, maxBytes: Infinity, swapMaxBytes: 0,
    anonBytes: 68808704, shmemBytes: 0, fileBytes: 0, ownHighEvents: 192, oomKills: 0,
    pressureFullUs: 7300751, pressureSomeUs: 7251847,
  });
});

test("a sample carries memory.events.local's oom_kill (the OOM watch takes it from an awake feed)", () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sb-cg-'));
  fs.cpSync(fixture, dir, { recursive: true });
  fs.writeFileSync(path.join(dir, 'memory.events.local'), 'low 0\nhigh 7\nmax 3\noom 2\noom_kill 2\noom_group_kill 0\n');
  assert.equal(readMemorySample(dir, 0).oomKills, 2);
  const files = SampleFiles.open(dir);
  assert.equal(files.read(0).oomKills, 2);
  files.close();
});

test('a cgroup without cpu.stat or memory.swap.max still reads (cpu.stat is not read at all)', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sb-cg-'));
  fs.cpSync(fixture, dir, { recursive: true });
  fs.rmSync(path.join(dir, 'cpu.stat'));
  fs.rmSync(path.join(dir, 'memory.swap.max'));
  const s = readMemorySample(dir, 0);
  assert.equal(s.swapMaxBytes, Infinity);
});

test('a vanished cgroup is a CgroupGoneError naming it', () => {
  const dir = path.join(os.tmpdir(), 'sb-no-such-cgroup');
  assert.throws(() => readMemorySample(dir, 0), (err) => err instanceof CgroupGoneError && err.message === `cgroup ${dir} is gone`);
  assert.equal(cgroupDir('/user.slice/a.scope', '/sys/fs/cgroup'), '/sys/fs/cgroup/user.slice/a.scope');
});

test('a cgroup of a kernel without PSI (no memory.pressure) reads, with no pressure figures', () => {
  // booted psi=0: memory.pressure does not exist in any cgroup; the fallback measure needs the rest
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sb-cg-'));
  fs.cpSync(fixture, dir, { recursive: true });
  fs.rmSync(path.join(dir, 'memory.pressure'));
  const s = readMemorySample(dir, 5);
  assert.equal(s.currentBytes, 69033984);
  assert.equal(s.ownHighEvents, 192);
  assert.equal(s.pressureFullUs, 0);
  assert.equal(s.pressureSomeUs, 0);
  const { snapshotSession } = require('../../../dist/sessions/snapshot.js');
  const snap = snapshotSession(dir, undefined, 0);
  assert.equal(snap.currentBytes, 69033984, 'status reads the session too');
  assert.equal(snap.pressureFullAvg10, null, 'no pressure figure, rather than a made-up 0');
});

test('cgroupOver: why a cgroup is over (gone, or populated 0), undefined while it holds processes', () => {
  const { cgroupOver } = require('../../../dist/cgroup/read.js');
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sb-cg-'));
  fs.writeFileSync(path.join(dir, 'cgroup.events'), 'populated 1\nfrozen 0\n');
  assert.equal(cgroupOver(dir), undefined);
  fs.writeFileSync(path.join(dir, 'cgroup.events'), 'populated 0\nfrozen 0\n');
  assert.equal(cgroupOver(dir), 'empty (cgroup.events: populated 0)');
  fs.rmSync(dir, { recursive: true });
  assert.equal(cgroupOver(dir), 'gone (its cgroup was removed)');
});

test('SampleFiles: the same sample as by path, fresh on every read, optional files absent, closed at the end', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sb-cg-'));
  fs.cpSync(fixture, dir, { recursive: true });
  fs.rmSync(path.join(dir, 'memory.swap.max'));
  const files = SampleFiles.open(dir);
  assert.equal(files.openFiles, 6, 'six of the seven: memory.swap.max is absent');
  assert.deepEqual(files.read(7), readMemorySample(dir, 7));
  // rewritten in place, as the kernel regenerates a cgroup file: a read from offset 0 sees it
  fs.writeFileSync(path.join(dir, 'memory.current'), '4096\n');
  const stat = fs.readFileSync(path.join(dir, 'memory.stat'), 'utf8');
  fs.writeFileSync(path.join(dir, 'memory.stat'), stat.replace(/^anon \d+$/m, 'anon 12345') + 'x'.repeat(0));
  const s = files.read(8);
  assert.equal(s.currentBytes, 4096);
  assert.equal(s.anonBytes, 12345);
  assert.equal(s.swapMaxBytes, Infinity);
  // one held file's text, as fresh (the OOM watch's read of memory.events.local)
  fs.writeFileSync(path.join(dir, 'memory.events.local'), 'low 0\nhigh 7\nmax 0\noom 1\noom_kill 1\n');
  assert.equal(files.textOf('memory.events.local'), 'low 0\nhigh 7\nmax 0\noom 1\noom_kill 1\n');
  assert.equal(files.textOf('memory.swap.max'), undefined, 'absent: undefined');
  files.close();
  assert.equal(files.openFiles, 0);
  assert.throws(() => files.read(9), /closed/);
  assert.equal(files.textOf('memory.current'), undefined, 'closed: undefined');
});

test('SampleFiles: a file longer than the read buffer is read whole', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sb-cg-'));
  fs.cpSync(fixture, dir, { recursive: true });
  // memory.stat with 2,000 extra lines before the ones needed (some 40 KB)
  const extra = Array.from({ length: 2000 }, (_, i) => `pad${i} ${i}`).join('\n');
  fs.writeFileSync(path.join(dir, 'memory.stat'), `${extra}\nanon 1\nfile 2\nshmem 3\n`);
  const files = SampleFiles.open(dir);
  const s = files.read(0);
  assert.deepEqual([s.anonBytes, s.fileBytes, s.shmemBytes], [1, 2, 3]);
  files.close();
});

test('SampleFiles: a vanished cgroup is a CgroupGoneError on open', () => {
  const dir = path.join(os.tmpdir(), 'sb-no-such-cgroup');
  assert.throws(() => SampleFiles.open(dir), (err) => err instanceof CgroupGoneError);
});
