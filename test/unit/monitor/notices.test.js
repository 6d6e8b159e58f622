// @ts-check
'use strict';
// Issue 13: notifyOn over new output, coalesced, never more than maxLines (with a receipt);
// backoff with jitter and suspension after maxConsecutiveFailures.
const test = require('node:test');
const assert = require('node:assert/strict');
const fc = require('fast-check');
const { addLines, flush, compileMatchers, MAX_LINE_CHARS } = require('../../../dist/monitor/notices.js');
const { backoffS, afterTick, noFailures, MAX_BACKOFF_S } = require('../../../dist/monitor/backoff.js');

const cfg = { notifyOn: ['ERROR', 'listening on'], coalesceSeconds: 5, maxLines: 3 };
const m = compileMatchers(cfg);

test('only matching lines are kept; matches within coalesceSeconds go out as one notice', () => {
  let p = addLines(undefined, ['compiling', 'ERROR: a'], m, 3, 1000);
  p = addLines(p, ['ok', 'ERROR: b'], m, 3, 4000);
  assert.equal(flush(p, 5, 5999), undefined, 'still gathering');
  assert.deepEqual(flush(p, 5, 6000), { lines: ['ERROR: a', 'ERROR: b'], truncated: 0 });
  assert.equal(addLines(undefined, ['fine', 'all good'], m, 3, 0), undefined, 'nothing matched: nothing to tell');
});

test('a flood: at most maxLines, the rest counted', () => {
  const lines = Array.from({ length: 1000 }, (_, i) => `ERROR ${i}`);
  const n = flush(addLines(undefined, lines, m, 3, 0), 5, 5000);
  assert.deepEqual(n, { lines: ['ERROR 0', 'ERROR 1', 'ERROR 2'], truncated: 997 });
});

test('a huge line is cut, with a mark', () => {
  const n = flush(addLines(undefined, [`ERROR ${'x'.repeat(5000)}`], m, 3, 0), 5, 5000);
  assert.ok(n && n.lines[0] && n.lines[0].length < MAX_LINE_CHARS + 40);
  assert.match(n?.lines[0] ?? '', /more characters\)$/);
});

test('property: a notice never has more than maxLines lines, and kept + truncated = matches', () => {
  fc.assert(fc.property(fc.array(fc.array(fc.constantFrom('ERROR x', 'fine', 'listening on :3000'), { maxLength: 30 }), { maxLength: 20 }), fc.integer({ min: 1, max: 10 }), (batches, maxLines) => {
    let p;
    for (const b of batches) p = addLines(p, b, m, maxLines, 0);
    const n = flush(p, 0, 0);
    const matches = batches.flat().filter((l) => l !== 'fine').length;
    return matches === 0 ? n === undefined : n !== undefined && n.lines.length <= maxLines && n.lines.length + n.truncated === matches;
  }));
});

test('backoff: doubles from the interval, capped, jittered by at most 20 %', () => {
  assert.equal(backoffS(30, 0, 0.5), 30);
  assert.equal(backoffS(30, 1, 0.5), 60);
  assert.equal(backoffS(30, 3, 0.5), 240);
  assert.equal(backoffS(30, 20, 0.5), MAX_BACKOFF_S);
  assert.equal(backoffS(30, 1, 0), 48);
  assert.ok(backoffS(30, 1, 0.999) < 72);
});

test('suspension after maxConsecutiveFailures, told once; a success resets', () => {
  let s = noFailures();
  const told = [];
  for (let i = 0; i < 7; i++) {
    const r = afterTick(s, false, 3);
    s = r.state;
    told.push(r.suspendNow);
  }
  assert.deepEqual(told, [false, false, true, false, false, false, false]);
  assert.equal(s.suspended, true);
  assert.deepEqual(afterTick(s, true, 3).state, { consecutive: 0, suspended: false });
});
