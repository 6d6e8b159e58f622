// @ts-check
'use strict';
// Issue 13: conservative recovery after sbd restarts, and one summary line.
const test = require('node:test');
const assert = require('node:assert/strict');
const { planRecovery } = require('../../../dist/monitor/recovery.js');

const NOW = Date.UTC(2026, 11, 1, 3, 0, 0);
const r = (id, type, over = {}) => ({ id, type, lifecycle: 'running', sessionLive: true, ...over });

test('files, tails and probes resume; a local poll awaits confirmation; a spawn is never replayed', () => {
  const plan = planRecovery([
    r('t', 'tail'), r('f', 'file'), r('h', 'http'), r('s', 'ssh'),
    r('p', 'poll'),
    r('alive', 'spawn', { unit: { activeState: 'active', result: 'success' } }),
    r('dead', 'spawn', { unit: { activeState: 'failed', result: 'exit-code' } }),
    r('nounit', 'spawn'),
  ], 0, NOW);
  const of = (id) => plan.actions.find((a) => a.id === id)?.action;
  assert.deepEqual(['t', 'f', 'h', 's'].map(of), ['resume', 'resume', 'resume', 'resume']);
  assert.equal(of('p'), 'await-confirmation');
  assert.equal(of('alive'), 'reuse');
  assert.equal(of('dead'), 'report-gone');
  assert.equal(of('nounit'), 'report-gone');
});

test('the crash-loop fuse: a unit that hit its start limit is quarantined', () => {
  const plan = planRecovery([r('loop', 'spawn', { unit: { activeState: 'failed', result: 'start-limit-hit' } })], 0, NOW);
  assert.equal(plan.actions[0]?.action, 'quarantine');
});

test('expired, ended sessions and corrupt records; quarantined ones wait for recover', () => {
  const plan = planRecovery([
    r('old', 'tail', { expiresAtMs: NOW - 1 }), r('later', 'tail', { expiresAtMs: NOW + 60_000 }),
    r('orphan', 'tail', { sessionLive: false }), r('q', 'spawn', { lifecycle: 'quarantined' }),
  ], 4, NOW);
  assert.deepEqual(plan.actions.map((a) => a.action), ['expire', 'resume', 'compact', 'keep']);
  assert.equal(plan.summary, 'monitors after the restart: 1 resumed, 1 expired, 5 stale records compacted');
});

test('one summary line in the issue\'s words', () => {
  const plan = planRecovery([
    r('a', 'tail'), r('b', 'http'), r('c', 'spawn', { unit: { activeState: 'active', result: 'success' } }),
    r('d', 'tail', { expiresAtMs: NOW - 5 }), r('e', 'tail', { expiresAtMs: NOW - 5 }), r('f', 'tail', { expiresAtMs: NOW }),
    r('g', 'spawn', { unit: { activeState: 'failed', result: 'start-limit-hit' } }), r('h', 'spawn', { unit: { activeState: 'failed', result: 'start-limit-hit' } }),
  ], 4, NOW);
  assert.equal(plan.summary, 'monitors after the restart: 2 resumed, 1 reused, 3 expired, 2 quarantined, 4 stale records compacted');
  assert.equal(planRecovery([], 0, NOW).summary, 'monitors after the restart: none on record');
});

test('after a restart, a unit failed at the start limit with Result exit-code (systemd 252) is quarantined', () => {
  const plan = planRecovery([r('loop', 'spawn', { unit: { activeState: 'failed', result: 'exit-code', nRestarts: 3 } }), r('once', 'spawn', { unit: { activeState: 'failed', result: 'exit-code', nRestarts: 0 } })], 0, NOW);
  assert.deepEqual(plan.actions.map((a) => a.action), ['quarantine', 'report-gone']);
});

test('a process monitor resumes (its runner then checks the pid is the same process); a suspended http probe stays suspended', () => {
  const plan = planRecovery([r('p', 'process'), r('h', 'http', { lifecycle: 'suspended' })], 0, NOW);
  assert.deepEqual(plan.actions.map((a) => [a.id, a.action]), [['p', 'resume'], ['h', 'keep']]);
  assert.equal(plan.summary, 'monitors after the restart: 1 resumed');
});

test('a session that ended while sbd was away: its spawn still running is stopped with it; a detached one outlives it (reused while its unit runs, compacted once gone)', () => {
  const plan = planRecovery([
    r('srv', 'spawn', { sessionLive: false, detached: true, unit: { activeState: 'active', result: 'success' } }),
    r('done', 'spawn', { sessionLive: false, detached: true, unit: { activeState: 'inactive', result: 'success' } }),
    r('attached', 'spawn', { sessionLive: false, unit: { activeState: 'active', result: 'success' } }),
  ], 0, NOW);
  assert.deepEqual(plan.actions.map((a) => a.action), ['reuse', 'compact', 'end-with-session']);
  assert.equal(plan.summary, 'monitors after the restart: 1 reused, 1 stopped with their session, 1 stale records compacted');
});

test('a quarantined spawn whose unit still restarts (sbd killed between the quarantine and the stop) has its unit stopped; one whose unit ended is kept', () => {
  const plan = planRecovery([
    r('between', 'spawn', { lifecycle: 'quarantined', unit: { activeState: 'activating', result: 'exit-code', nRestarts: 4 } }),
    r('running', 'spawn', { lifecycle: 'quarantined', unit: { activeState: 'active', result: 'success', nRestarts: 4 } }),
    r('ended', 'spawn', { lifecycle: 'quarantined', unit: { activeState: 'inactive', result: 'exit-code' } }),
    r('gone', 'spawn', { lifecycle: 'quarantined' }),
    r('poll', 'poll', { lifecycle: 'quarantined' }),
  ], 0, NOW);
  assert.deepEqual(plan.actions.map((a) => [a.id, a.action]), [['between', 'stop-unit'], ['running', 'stop-unit'], ['ended', 'keep'], ['gone', 'keep'], ['poll', 'keep']]);
  assert.match(plan.actions[0]?.why ?? '', /its unit ran on .*: its unit stopped; waits for sbctl monitor recover/);
  assert.equal(plan.summary, "monitors after the restart: 2 quarantined ones' units stopped");
});

test('a quarantined spawn whose unit still restarts after its session ended is stopped with its session, not compacted and left running', () => {
  const plan = planRecovery([
    r('orphaned', 'spawn', { lifecycle: 'quarantined', sessionLive: false, unit: { activeState: 'activating', result: 'exit-code', nRestarts: 4 } }),
    r('ended', 'spawn', { lifecycle: 'quarantined', sessionLive: false, unit: { activeState: 'failed', result: 'exit-code' } }),
  ], 0, NOW);
  assert.deepEqual(plan.actions.map((a) => [a.id, a.action]), [['orphaned', 'end-with-session'], ['ended', 'compact']]);
});
