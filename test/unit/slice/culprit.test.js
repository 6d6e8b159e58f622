// @ts-check
'use strict';
// The culprit of a slice's stall (design.md §11): grew most, else most above its fair share;
// an innocent member (never above its fair share, not growing) is never chosen.
const test = require('node:test');
const assert = require('node:assert/strict');
const fc = require('fast-check');
const { chooseCulprit } = require('../../../dist/slice/culprit.js');

const MiB = 2 ** 20;
const MIN_GROWTH = 64 * MiB;

test('the member that grew most since the episode began is the culprit', () => {
  const c = chooseCulprit([{ path: 'innocent.scope', currentBytes: 165 * MiB }, { path: 'greedy.scope', currentBytes: 155 * MiB }],
    { 'innocent.scope': 165 * MiB, 'greedy.scope': 10 * MiB }, 320 * MiB, MIN_GROWTH);
  assert.equal(c.culprit?.path, 'greedy.scope');
  assert.equal(c.culprit?.rule, 'grew-most');
  assert.equal(c.culprit?.growthBytes, 145 * MiB);
  assert.match(c.why, /greedy\.scope grew most since the episode began: \+145 MiB/);
  assert.deepEqual(c.members.map((m) => m.fairShareBytes), [160 * MiB, 160 * MiB]);
});

test('a member born during the episode grew by all it holds', () => {
  const c = chooseCulprit([{ path: 'old.scope', currentBytes: 200 * MiB }, { path: 'new.scope', currentBytes: 100 * MiB }], { 'old.scope': 200 * MiB }, 320 * MiB, MIN_GROWTH);
  assert.equal(c.culprit?.path, 'new.scope');
  assert.equal(c.culprit?.growthBytes, 100 * MiB);
});

test('with no member growing, the one most above its fair share is the culprit', () => {
  const start = { 'a.scope': 250 * MiB, 'b.scope': 60 * MiB, 'c.scope': 10 * MiB };
  const c = chooseCulprit([{ path: 'a.scope', currentBytes: 250 * MiB }, { path: 'b.scope', currentBytes: 60 * MiB }, { path: 'c.scope', currentBytes: 10 * MiB }], start, 300 * MiB, MIN_GROWTH);
  assert.equal(c.culprit?.path, 'a.scope');
  assert.equal(c.culprit?.rule, 'above-fair-share');
  assert.match(c.why, /250 MiB of a fair 100 MiB/);
});

test('growth below the minimum is noise: nobody above the fair share, nobody chosen', () => {
  const c = chooseCulprit([{ path: 'a.scope', currentBytes: 150 * MiB }, { path: 'b.scope', currentBytes: 150 * MiB }], { 'a.scope': 100 * MiB, 'b.scope': 140 * MiB }, 320 * MiB, MIN_GROWTH);
  assert.equal(c.culprit, undefined);
  assert.match(c.why, /no member grew 64 MiB or more/);
});

test('a nested slice is one member; within it the same rule picks a unit', () => {
  const members = [
    { path: 'innocent.scope', currentBytes: 165 * MiB },
    { path: 'sub.slice', currentBytes: 160 * MiB },
    { path: 'sub.slice/quiet.scope', currentBytes: 20 * MiB },
    { path: 'sub.slice/greedy.scope', currentBytes: 140 * MiB },
  ];
  const start = { 'innocent.scope': 165 * MiB, 'sub.slice': 30 * MiB, 'sub.slice/quiet.scope': 20 * MiB, 'sub.slice/greedy.scope': 10 * MiB };
  const c = chooseCulprit(members, start, 320 * MiB, MIN_GROWTH);
  assert.equal(c.culprit?.path, 'sub.slice/greedy.scope');
  assert.match(c.why, /sub\.slice grew most.*within it, sub\.slice\/greedy\.scope grew most/);
  // fair shares count the nested slice as one member of its parent
  assert.deepEqual(c.members.map((m) => m.path), ['sub.slice/quiet.scope', 'sub.slice/greedy.scope']);
});

test('property: an innocent member (never above its fair share, not growing) is never chosen', () => {
  const member = fc.record({
    start: fc.integer({ min: 0, max: 4096 }),
    delta: fc.integer({ min: -1024, max: 2048 }),
  });
  fc.assert(fc.property(fc.array(member, { minLength: 1, maxLength: 12 }), fc.integer({ min: 64, max: 8192 }), fc.integer({ min: 1, max: 256 }), (ms, limitMiB, minGrowthMiB) => {
    const members = ms.map((m, i) => ({ path: `s${i}.scope`, currentBytes: Math.max(0, m.start + m.delta) * MiB }));
    const start = Object.fromEntries(ms.map((m, i) => [`s${i}.scope`, m.start * MiB]));
    const fair = (limitMiB * MiB) / members.length;
    const c = chooseCulprit(members, start, limitMiB * MiB, minGrowthMiB * MiB);
    if (c.culprit === undefined) {
      // nobody chosen only when nobody stands out
      return members.every((m) => m.currentBytes <= fair && m.currentBytes - (start[m.path] ?? 0) < minGrowthMiB * MiB);
    }
    const chosen = members.find((m) => m.path === c.culprit?.path);
    assert.ok(chosen);
    const innocent = chosen.currentBytes <= fair && chosen.currentBytes - (start[chosen.path] ?? 0) < minGrowthMiB * MiB;
    return !innocent;
  }), { numRuns: 2000 });
});
