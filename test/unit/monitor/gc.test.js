// @ts-check
'use strict';
// Issue 13: what gc archives (pure): corrupt records, orphans (session ended or replaced by
// another invocation), finished monitors past the retention; a detached unit still running kept.
const test = require('node:test');
const assert = require('node:assert/strict');
const { planGc, FINISHED_RETENTION_MS } = require('../../../dist/monitor/gc.js');

const NOW = Date.UTC(2026, 11, 1, 9, 0, 0);
const v = (handle, over = {}) => ({ id: `${handle}-id`, handle, sessionId: 'fix', lifecycle: 'running', session: 'live', unitActive: false, ...over });

test('orphans: an ended session, or its name now another invocation', () => {
  const plan = planGc([v('gone1', { session: 'gone' }), v('new1', { session: 'replaced', lifecycle: 'stopped', endedAtMs: NOW })], [], NOW);
  assert.deepEqual(plan.map((e) => [e.kind, e.what, e.why]), [
    ['orphan', 'gone1', 'its session "fix" has ended'],
    ['orphan', 'new1', 'its session "fix" is another one now (a new invocation of the same name)'],
  ]);
});

test('finished monitors are kept for the retention after their end, then collected; live ones never', () => {
  const plan = planGc([
    v('run', { lifecycle: 'running' }), v('q', { lifecycle: 'quarantined' }),
    v('fresh', { lifecycle: 'stopped', endedAtMs: NOW - FINISHED_RETENTION_MS + 1 }),
    v('old', { lifecycle: 'expired', endedAtMs: NOW - FINISHED_RETENTION_MS - 1 }),
    v('unknown', { lifecycle: 'gone' }),
  ], [], NOW);
  assert.deepEqual(plan.map((e) => [e.kind, e.what]), [['finished', 'old']]);
});

test('a record whose unit still runs is kept, with what to do; corrupt files come first', () => {
  const plan = planGc([v('srv', { session: 'gone', unitActive: true })], [{ file: '/s/monitors/x.json', why: 'not readable JSON: Unexpected end' }], NOW);
  assert.deepEqual(plan.map((e) => [e.kind, e.what]), [['corrupt', 'x.json'], ['kept', 'srv']]);
  assert.equal(plan[0].why, 'unreadable record: not readable JSON: Unexpected end');
  assert.match(plan[1].why, /its unit still runs \(detached\): sbctl monitor stop --session fix srv first$/);
});
