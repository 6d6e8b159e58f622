// @ts-check
'use strict';
// The kernel's view of a slice, on a fake cgroup tree (Meta's oomd style): what shares its brake
// and what the others use, whether sbd watches them as sessions or not.
const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { cgroupsInSlice, othersInSlice } = require('../../../dist/actions/machine.js');

const MiB = 2 ** 20;

function fakeSlice(t) {
  const slice = fs.mkdtempSync(path.join(os.tmpdir(), 'sb-slice-'));
  t.after(() => fs.rmSync(slice, { recursive: true, force: true }));
  for (const dir of ['innocent.scope', 'nbr-sub.slice', 'nbr-sub.slice/greedy.scope']) fs.mkdirSync(path.join(slice, dir));
  for (const file of ['memory.current', 'memory.high', 'cgroup.procs', 'memory.pressure']) fs.writeFileSync(path.join(slice, file), '0\n');
  return slice;
}

test('cgroupsInSlice: counts every child cgroup, a nested slice included, and no file', (t) => {
  const slice = fakeSlice(t);
  assert.equal(cgroupsInSlice(slice), 2, 'innocent.scope and nbr-sub.slice (its own child is not the slice\'s)');
  fs.rmdirSync(path.join(slice, 'innocent.scope'));
  assert.equal(cgroupsInSlice(slice), 1);
});

test('cgroupsInSlice: a slice that cannot be read gives no count (the caller uses its own)', () => {
  assert.equal(cgroupsInSlice('/nonexistent-sb-test/nbr.slice'), undefined);
});

test('othersInSlice: the slice\'s memory.current less the session\'s, never below 0; none when unreadable', (t) => {
  const slice = fakeSlice(t);
  fs.writeFileSync(path.join(slice, 'memory.current'), `${300 * MiB}\n`);
  assert.equal(othersInSlice(slice, 180 * MiB), 120 * MiB);
  assert.equal(othersInSlice(slice, 310 * MiB), 0, 'read a moment apart: the session may have grown');
  assert.equal(othersInSlice('/nonexistent-sb-test/nbr.slice', 180 * MiB), undefined, 'unreadable: no figure (the caller sums its sessions)');
});
