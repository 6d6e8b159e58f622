// @ts-check
'use strict';
// Issue 13: one UUID per logical monitor, a short handle, and reuse by reuseKey or identical source.
const test = require('node:test');
const assert = require('node:assert/strict');
const { parseMonitorSpec } = require('../../../dist/monitor/spec.js');
const { sourceHash, handleOf, resolveHandle, decideReuse, newMonitorId } = require('../../../dist/monitor/identity.js');

const poll = (over = {}) => parseMonitorSpec({ type: 'poll', argv: ['curl', '-fsS', 'http://localhost:3000/'], intervalS: 30, ...over });

test('the same source hashes the same whatever its label and notification settings; another source differs', () => {
  assert.equal(sourceHash(poll({ label: 'a', notifyOn: ['ERR'] })), sourceHash(poll({ label: 'b', maxLines: 3 })));
  assert.notEqual(sourceHash(poll()), sourceHash(poll({ intervalS: 60 })));
  assert.notEqual(sourceHash(poll()), sourceHash(poll({ argv: ['curl', 'http://localhost:4000/'] })));
});

test('handles: 8 hex digits, longer only where another monitor shares the prefix', () => {
  const a = '0123abcd-0000-4000-8000-000000000001';
  const b = '0123abcd-1111-4000-8000-000000000002';
  assert.equal(handleOf(a, []), '0123abcd');
  assert.equal(handleOf(a, [a, b]), '0123abcd0');
  assert.match(handleOf(newMonitorId(), []), /^[0-9a-f]{8}$/);
});

test('resolving a handle: by prefix or label; unknown and ambiguous are said', () => {
  const ms = [{ id: '0123abcd-0000-4000-8000-000000000001', label: 'dev' }, { id: '0123abcd-1111-4000-8000-000000000002', label: 'ci' }];
  assert.equal(/** @type {any} */ (resolveHandle(ms, '0123abcd0')).label, 'dev');
  assert.equal(/** @type {any} */ (resolveHandle(ms, 'ci')).id, ms[1]?.id);
  assert.match(/** @type {any} */ (resolveHandle(ms, '0123abcd')).error, /names 2 monitors/);
  assert.match(/** @type {any} */ (resolveHandle(ms, 'nope')).error, /no monitor "nope"/);
});

test('reuse: return-existing by identical source, replace, parallel, and by reuseKey', () => {
  const p = poll();
  const live = [{ id: 'm1', sourceHash: sourceHash(p), live: true }];
  assert.deepEqual(decideReuse(p, sourceHash(p), live), { answer: 'reused', id: 'm1' });
  assert.deepEqual(decideReuse(poll({ reuse: 'replace' }), sourceHash(p), live), { answer: 'replaced', id: 'm1' });
  assert.deepEqual(decideReuse(poll({ reuse: 'parallel' }), sourceHash(p), live), { answer: 'created' });
  assert.deepEqual(decideReuse(p, sourceHash(p), [{ ...live[0], live: false }]), { answer: 'created' }, 'a stopped one is not reused');
  const keyed = [{ id: 'k1', reuseKey: 'dev-server', sourceHash: 'other', live: true }];
  assert.deepEqual(decideReuse(poll({ reuseKey: 'dev-server' }), sourceHash(p), keyed), { answer: 'reused', id: 'k1' }, 'by key, whatever the source');
  assert.deepEqual(decideReuse(p, sourceHash(p), [{ id: 'k2', reuseKey: 'x', sourceHash: sourceHash(p), live: true }]), { answer: 'created' }, 'a keyed monitor is found only by its key');
});
