// @ts-check
'use strict';
// Issue 13: a poll's tick judged from its service's receipt (ExecMainCode, ExecMainStatus,
// Result), each run counted once; what follows: keep, back off, back to the interval, suspend;
// and the agent told once per streak's start, end and suspension, never per tick.
const test = require('node:test');
const assert = require('node:assert/strict');
const { tickEnded, decideTick } = require('../../../dist/monitor/poll-tick.js');

const INV = 'a1'.repeat(16);
const unit = (over) => ({ unit: 'x.service', invocationId: INV, controlGroup: '', slice: 's', activeState: 'inactive', memoryHigh: Infinity, memoryMax: Infinity, memorySwapMax: Infinity, result: 'success', execMainCode: 1, execMainStatus: 0, ...over });

test('a tick is judged once it has ended, once per run', () => {
  assert.equal(tickEnded(unit({ activeState: 'active' }), undefined, 5, 'poll'), undefined, 'still running');
  assert.equal(tickEnded(undefined, undefined, 5, 'poll'), undefined, 'unit gone: no receipt');
  assert.equal(tickEnded(unit({ invocationId: '' }), undefined, 5, 'poll'), undefined, 'never ran');
  assert.equal(tickEnded(unit({ invocationId: '0'.repeat(32) }), undefined, 5, 'poll'), undefined, 'never ran');
  const t = tickEnded(unit({}), undefined, 5, 'poll');
  assert.deepEqual(t, { invocationId: INV, ok: true, exit: { code: 'exited', status: 0 }, what: 'exited with status 0' });
  assert.equal(tickEnded(unit({}), INV, 5, 'poll'), undefined, 'this run was counted already');
});

test('failures in the agent\'s words: an exit status, a signal, the timeout, ssh\'s own 255', () => {
  assert.equal(tickEnded(unit({ activeState: 'failed', result: 'exit-code', execMainStatus: 1 }), undefined, 5, 'poll')?.what, 'exited with status 1');
  const killed = tickEnded(unit({ activeState: 'failed', result: 'signal', execMainCode: 2, execMainStatus: 9 }), undefined, 5, 'poll');
  assert.deepEqual([killed?.ok, killed?.exit, killed?.what], [false, { code: 'killed', status: 9 }, 'was killed by signal 9']);
  const late = tickEnded(unit({ activeState: 'failed', result: 'timeout', execMainCode: 2, execMainStatus: 15 }), undefined, 7, 'poll');
  assert.deepEqual([late?.ok, late?.what], [false, 'timed out after 7 s and was stopped']);
  assert.match(tickEnded(unit({ activeState: 'failed', result: 'exit-code', execMainStatus: 255 }), undefined, 5, 'ssh')?.what ?? '', /^exited with status 255 \(ssh itself failed/);
  assert.equal(tickEnded(unit({ activeState: 'failed', result: 'exit-code', execMainStatus: 255 }), undefined, 5, 'poll')?.what, 'exited with status 255');
});

const ok = { invocationId: 'i', ok: true, exit: { code: 'exited', status: 0 }, what: 'exited with status 0' };
const bad = { invocationId: 'i', ok: false, exit: { code: 'exited', status: 2 }, what: 'exited with status 2' };

test('a streak: told when it starts, silent while it lasts, told when it ends', () => {
  assert.deepEqual(decideTick(0, ok, 3), { consecutiveFailures: 0, next: 'keep' });
  const first = decideTick(0, bad, 3);
  assert.equal(first.next, 'backoff');
  assert.equal(first.consecutiveFailures, 1);
  assert.equal(first.notice?.kind, 'failing');
  assert.match(first.notice?.text ?? '', /exited with status 2/);
  const second = decideTick(1, bad, 3);
  assert.deepEqual(second, { consecutiveFailures: 2, next: 'backoff' }, 'no notice per tick');
  const back = decideTick(2, ok, 3);
  assert.deepEqual([back.consecutiveFailures, back.next, back.notice?.kind], [0, 'interval', 'recovered']);
});

test('maxConsecutiveFailures in a row suspend, with one notice naming the last exit', () => {
  const s = decideTick(2, bad, 3);
  assert.equal(s.next, 'suspend');
  assert.equal(s.consecutiveFailures, 3);
  assert.equal(s.notice?.kind, 'suspended');
  assert.match(s.notice?.text ?? '', /^suspended after 3 failed ticks in a row; the last exited with status 2/);
  const once = decideTick(0, bad, 1);
  assert.deepEqual([once.next, once.notice?.kind], ['suspend', 'suspended'], 'a limit of 1: only the suspension is told');
});
