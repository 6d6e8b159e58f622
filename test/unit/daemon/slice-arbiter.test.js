// @ts-check
'use strict';
// Issue 15, item 5: a slice member's figures come from its session feed where it can give them
// (its last sample, fresh enough for what is wanted, or a read through the files it holds open),
// so that a storm's slice windows do not read every member's files by path again.
const test = require('node:test');
const assert = require('node:assert/strict');
const { memberFiguresOf, MEMBER_FIGURES_FRESH_SHARE, MEMBER_SIZE_FRESH_SHARE } = require('../../../dist/daemon/slice-arbiter.js');

/** A feed whose last sample was taken at `sampledAt` and which holds its files when `holds`. */
function feed(sampledAt, holds) {
  const calls = [];
  return {
    calls,
    recentFigures: (now, maxAgeMs) => {
      calls.push(['recent', maxAgeMs]);
      return now - sampledAt <= maxAgeMs ? { atMs: sampledAt, currentBytes: 100, fullUs: 7 } : undefined;
    },
    heldFigures: (now, sizesOnly) => {
      calls.push(['held', sizesOnly]);
      return holds ? { atMs: now, currentBytes: 200, fullUs: sizesOnly ? 0 : 9 } : undefined;
    },
  };
}

test('the thresholds: a stall share wants half a window at most, a size a whole one', () => {
  assert.equal(MEMBER_FIGURES_FRESH_SHARE, 0.5);
  assert.equal(MEMBER_SIZE_FRESH_SHARE, 1);
});

test("memberFiguresOf: a sample 1.5 s old stands for a size but not for a stall's share (2 s windows)", () => {
  const f = feed(1000, false);
  assert.deepEqual(memberFiguresOf(f, 2500, 2000, true), { atMs: 1000, currentBytes: 100, fullUs: 7 });
  assert.equal(memberFiguresOf(f, 2500, 2000, false), undefined, 'no held files: the slice reads by path');
  assert.deepEqual(f.calls, [['recent', 2000], ['recent', 1000], ['held', false]]);
});

test('memberFiguresOf: too old a sample, files held: read through them, now', () => {
  const f = feed(0, true);
  assert.deepEqual(memberFiguresOf(f, 5000, 2000, true), { atMs: 5000, currentBytes: 200, fullUs: 0 });
  assert.deepEqual(memberFiguresOf(f, 5000, 2000, false), { atMs: 5000, currentBytes: 200, fullUs: 9 });
  assert.equal(memberFiguresOf(undefined, 5000, 2000, true), undefined, 'no feed (not a session): read by path');
});
