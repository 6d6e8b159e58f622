// @ts-check
'use strict';
// Issue 13: inspect's receipt (pure): from the record and systemd's view of the unit, for people
// and through sbd's bus (a{sv}: a none is left out and put back as null).
const test = require('node:test');
const assert = require('node:assert/strict');
const { receiptOf, formatReceipt } = require('../../../dist/monitor/receipt.js');
const { receiptToBus, receiptFromBus } = require('../../../dist/daemon/bus-types.js');

const record = {
  id: '3f2a9c1e-0000-4000-8000-000000000001', sessionId: 'fix', sessionUnit: 'fix.scope', sessionInvocation: 'a'.repeat(32),
  spec: { type: 'spawn', argv: ['/usr/bin/npm', 'run', 'dev', '--token=s3cret'], label: 'dev', reuse: 'return-existing', notifyOn: [], coalesceSeconds: 5, maxLines: 10, maxConsecutiveFailures: 5, detached: false, expiresAt: '2026-12-01T06:00:00Z' },
  sourceHash: 'ab'.repeat(32), lifecycle: 'stopped', reason: 'it exited with status 1', createdAtMs: 1_764_554_400_000, endedAtMs: 1_764_558_000_000,
  owner: { busName: ':1.42', epoch: 1_764_550_000_000 }, unit: { name: 'sb-monitor-3f2a9c1e-0000-4000-8000-000000000001.service', invocationId: 'c'.repeat(32) },
  ticks: 12, consecutiveFailures: 0, offset: 4096, truncations: 1, exit: { code: 'exited', status: 1 },
};
const unit = { unit: record.unit.name, invocationId: 'c'.repeat(32), activeState: 'failed', result: 'exit-code', mainPid: 0, nRestarts: 3, mainStartedAtMs: 1_764_554_401_000, controlGroup: '', slice: '', memoryHigh: 0, memoryMax: 0, memorySwapMax: 0 };

test('the receipt: owner and epoch, unit and invocation, command hash, times, exit, no signals, counts, offset, expiry', () => {
  const x = receiptOf(record, '3f2a9c1e', unit, -60);
  assert.deepEqual(x.owner, { busName: ':1.42', epochMs: 1_764_550_000_000 });
  assert.deepEqual(x.unit, { name: record.unit.name, invocationId: 'c'.repeat(32), invocationIdNow: 'c'.repeat(32), activeState: 'failed', result: 'exit-code', mainPid: null, nRestarts: 3 });
  assert.equal(x.commandHash, 'ab'.repeat(32));
  assert.deepEqual([x.createdAtMs, x.startedAtMs, x.endedAtMs], [1_764_554_400_000, 1_764_554_401_000, 1_764_558_000_000]);
  assert.deepEqual(x.exit, { code: 'exited', status: 1 });
  assert.deepEqual(x.signalsSent, []);
  assert.deepEqual([x.ticks, x.consecutiveFailures, x.truncations, x.offset, x.expiresAt, x.expiresInS], [12, 0, 1, 4096, '2026-12-01T06:00:00Z', -60]);
  assert.doesNotMatch(JSON.stringify(x), /s3cret|run dev/, 'never the command line');
});

test('a unit gone: its state is said, not guessed', () => {
  const x = receiptOf(record, '3f2a9c1e', undefined, null);
  assert.deepEqual(x.unit, { name: record.unit.name, invocationId: 'c'.repeat(32), invocationIdNow: null, activeState: 'gone', result: null, mainPid: null, nRestarts: null });
  assert.equal(x.startedAtMs, null);
});

test('for people: one line per item', () => {
  const text = formatReceipt(receiptOf(record, '3f2a9c1e', unit, -60));
  assert.match(text, /^monitor: +3f2a9c1e \(3f2a9c1e-0000-4000-8000-000000000001\) "dev"$/m);
  assert.match(text, /^owner: +:1\.42, sbd started 2025-12-01 00:46:40 \(epoch 1764550000000\)$/m);
  assert.match(text, /^signals sent: +none \(a stop is systemd's: StopUnit, KillMode=control-group\)$/m);
  assert.match(text, /^expires: +2026-12-01T06:00:00Z \(60 s ago\)$/m);
  assert.match(text, /^exit: +exited 1$/m);
});

test('through sbd\'s bus and back: the same receipt, nones as null', () => {
  for (const x of [receiptOf(record, '3f2a9c1e', unit, -60.5), receiptOf({ ...record, spec: { ...record.spec, label: undefined, expiresAt: undefined }, unit: undefined, exit: undefined, offset: undefined, reason: undefined, endedAtMs: undefined }, 'h', undefined, null)]) {
    assert.deepEqual(receiptFromBus(receiptToBus(x)), x);
  }
});
