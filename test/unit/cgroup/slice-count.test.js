// @ts-check
'use strict';
// "Alone in its slice" without a readdir of the slice on every sample (issue 15, item 5).
const test = require('node:test');
const assert = require('node:assert/strict');
const { SliceCounts, SLICE_COUNT_MAX_AGE_MS } = require('../../../dist/cgroup/slice-count.js');

test('a slice is read at most once a second; each slice apart; a count older than that is read again', () => {
  const reads = [];
  const children = { '/a.slice': 1, '/b.slice': 5 };
  const clock = { t: 1000 };
  const counts = new SliceCounts((dir) => (reads.push(dir), children[dir]), () => clock.t);
  assert.equal(SLICE_COUNT_MAX_AGE_MS, 1000);
  assert.equal(counts.get('/a.slice'), 1);
  assert.equal(counts.get('/b.slice'), 5);
  children['/a.slice'] = 2; // a neighbour arrives
  clock.t += 999;
  assert.equal(counts.get('/a.slice'), 1, 'within the second: the count read before');
  assert.deepEqual(reads, ['/a.slice', '/b.slice']);
  clock.t += 1;
  assert.equal(counts.get('/a.slice'), 2, 'a second on: read again, the neighbour counted');
  assert.deepEqual(reads, ['/a.slice', '/b.slice', '/a.slice']);
});

test('a slice that cannot be read is undefined, and asked again after the second like any other', () => {
  let n = 0;
  const clock = { t: 0 };
  const counts = new SliceCounts(() => (n++, undefined), () => clock.t);
  assert.equal(counts.get('/gone.slice'), undefined);
  assert.equal(counts.get('/gone.slice'), undefined);
  assert.equal(n, 1);
  clock.t = 1000;
  counts.get('/gone.slice');
  assert.equal(n, 2);
});

test('a clock that went back (a fake, or a test) reads again rather than trusting the future', () => {
  let n = 0;
  const clock = { t: 5000 };
  const counts = new SliceCounts(() => ++n, () => clock.t);
  counts.get('/a.slice');
  clock.t = 4000;
  assert.equal(counts.get('/a.slice'), 2);
});
