// @ts-check
'use strict';
// The slice readers over the fake cgroup tree of test/fixtures/cgroup (Meta oomd's habit):
// members with their pressure for a window, their sizes alone for the culprit's baseline.
const test = require('node:test');
const assert = require('node:assert/strict');
const path = require('node:path');
const { listMembers, readMembers } = require('../../../dist/slice/read.js');
const { readCurrentBytes } = require('../../../dist/cgroup/read.js');

const slice = path.resolve(__dirname, '../../fixtures/cgroup/sessions.slice');

test('readMembers: every member with its memory.current and its full-stall total; sizesOnly reads memory.current alone', () => {
  const full = readMembers(slice);
  const wedged = full.find((m) => m.path === 'wedged.scope');
  assert.deepEqual(wedged, { path: 'wedged.scope', currentBytes: 69033984, fullUs: 7300751 });
  const sizes = readMembers(slice, true);
  assert.deepEqual(sizes.map((m) => m.path), full.map((m) => m.path), 'the same members');
  assert.deepEqual(sizes.map((m) => m.currentBytes), full.map((m) => m.currentBytes), 'the same sizes');
  assert.ok(sizes.every((m) => m.fullUs === 0), 'no pressure read');
});

test('listMembers: the members readMembers reads, by the same names, without reading them', () => {
  assert.deepEqual(listMembers(slice), readMembers(slice, true).map((m) => m.path));
  assert.deepEqual(listMembers(`${slice}/`), listMembers(slice), 'a trailing slash names the same members');
  assert.deepEqual(listMembers(path.join(slice, 'gone.slice')), [], 'a vanished slice has none');
});

test('readCurrentBytes (the slice\'s snapshot tick): a cgroup\'s own memory.current; a vanished slice is a CgroupGoneError', () => {
  const { CgroupGoneError } = require('../../../dist/cgroup/read.js');
  assert.equal(readCurrentBytes(path.join(slice, 'wedged.scope')), 69033984);
  assert.throws(() => readCurrentBytes(path.join(slice, 'gone.slice')), CgroupGoneError);
});

/** A copy of the fixture slice with the slice's own files (the fixture has its members' only). */
function sliceWithOwnFiles() {
  const fs = require('node:fs');
  const os = require('node:os');
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sb-slice-'));
  fs.cpSync(slice, dir, { recursive: true });
  const own = { 'memory.stat': 'anon 69033984\nfile 0\nshmem 0\n', 'memory.events.local': 'low 0\nhigh 0\nmax 0\noom 0\noom_kill 0\n', 'memory.current': '69033984\n', 'memory.high': 'max\n', 'memory.max': 'max\n', 'memory.pressure': 'some avg10=0.00 avg60=0.00 avg300=0.00 total=0\nfull avg10=0.00 avg60=0.00 avg300=0.00 total=0\n' };
  for (const [f, text] of Object.entries(own)) fs.writeFileSync(path.join(dir, f), text);
  return dir;
}

test("readSliceSample: the gate sees the slice's own figures and decides whether the members' pressure is read", () => {
  const { readSliceSample } = require('../../../dist/slice/read.js');
  const dir = sliceWithOwnFiles();
  const seen = [];
  const without = readSliceSample(dir, 5, (own) => { seen.push(own); return false; });
  assert.equal(seen.length, 1);
  assert.equal(seen[0].members, undefined, 'asked before any member is read');
  assert.equal(typeof seen[0].currentBytes, 'number');
  assert.equal(without.membersPressure, false);
  assert.ok(without.members.every((m) => m.fullUs === 0));
  const withIt = readSliceSample(dir, 6, () => true);
  assert.equal(withIt.membersPressure, undefined);
  assert.equal(withIt.members.find((m) => m.path === 'wedged.scope')?.fullUs, 7300751);
  assert.equal(readSliceSample(dir, 7).members.find((m) => m.path === 'wedged.scope')?.fullUs, 7300751, 'no gate: read');
});

test("readSliceSample: a member whose figures are known (its session feed's fresh sample) is not read; the rest are", () => {
  const { readSliceSample } = require('../../../dist/slice/read.js');
  const asked = [];
  const wanted = [];
  const known = (dir, sizesOnly) => {
    asked.push(path.basename(dir));
    wanted.push(sizesOnly);
    return dir.endsWith('/wedged.scope') ? { atMs: 3, currentBytes: 123, fullUs: 456 } : undefined;
  };
  const dir = sliceWithOwnFiles();
  const s = readSliceSample(dir, 5, undefined, known);
  const wedged = s.members.find((m) => m.path === 'wedged.scope');
  assert.deepEqual(wedged, { path: 'wedged.scope', currentBytes: 123, fullUs: 456, atMs: 3 }, "the feed's figures, with their own instant");
  const files = readMembers(slice);
  for (const m of s.members.filter((x) => x.path !== 'wedged.scope')) assert.deepEqual(m, files.find((f) => f.path === m.path), `${m.path}: read from its files`);
  assert.deepEqual(asked.sort(), listMembers(slice).map((m) => path.basename(m)).sort(), 'asked for every member');
  const sizes = readMembers(slice, true, known).find((m) => m.path === 'wedged.scope');
  assert.deepEqual(sizes, { path: 'wedged.scope', currentBytes: 123, fullUs: 0, atMs: 3 }, 'sizes only: no stall total');
  assert.equal(wanted.at(-1), true, 'asked for sizes only');
  assert.ok(wanted.slice(0, asked.length - listMembers(slice).length).every((w) => w === false), 'a full read asks for the stall totals too');
});
