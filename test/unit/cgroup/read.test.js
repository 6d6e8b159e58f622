// @ts-check
'use strict';
const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { readMemorySample, CgroupGoneError, cgroupDir } = require('../../../dist/cgroup/read.js');

const fixture = path.resolve(__dirname, '../../fixtures/cgroup/sessions.slice/wedged.scope');

test('a memory sample is read from a (fake) cgroup directory', () => {
  const s = readMemorySample(fixture, 1016);
  assert.deepEqual(s, {
    atMs: 1016, currentBytes: 69033984, highBytes: 67108864, maxBytes: Infinity, swapMaxBytes: 0,
    anonBytes: 68808704, shmemBytes: 0, fileBytes: 0, ownHighEvents: 192,
    pressureFullUs: 7300751, pressureSomeUs: 7251847,
  });
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
