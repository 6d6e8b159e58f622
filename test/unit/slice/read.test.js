// @ts-check
'use strict';
// The slice readers over the fake cgroup tree of test/fixtures/cgroup (Meta oomd's habit):
// members with their pressure for a window, their sizes alone for the culprit's baseline.
const test = require('node:test');
const assert = require('node:assert/strict');
const path = require('node:path');
const { listMembers, readMembers, readSliceCurrent } = require('../../../dist/slice/read.js');

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

test('readSliceCurrent: a cgroup\'s own memory.current; a vanished slice is a CgroupGoneError', () => {
  const { CgroupGoneError } = require('../../../dist/cgroup/read.js');
  assert.equal(readSliceCurrent(path.join(slice, 'wedged.scope')), 69033984);
  assert.throws(() => readSliceCurrent(path.join(slice, 'gone.slice')), CgroupGoneError);
});
