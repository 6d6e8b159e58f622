// @ts-check
'use strict';
// The registry against a fake user manager (pure bookkeeping; the real manager is exercised in
// the guest by test/vm/guest/20-sessions and 34-restart).
const test = require('node:test');
const assert = require('node:assert/strict');
const { SessionRegistry } = require('../../../dist/sessions/registry.js');

function fakeManager(units) {
  let listener = () => {};
  return {
    units,
    listSliceUnits: async () => [...units.values()],
    getUnit: async (u) => units.get(u),
    onUnitEvent: (l) => { listener = l; },
    fire: (e) => listener(e),
  };
}
const unit = (name, slice = 'sessions.slice', inv = 'a'.repeat(32)) => ({
  unit: name, invocationId: inv, controlGroup: `/nonexistent-sb-test/${name}`, slice, activeState: 'active',
  memoryHigh: 1 << 28, memoryMax: Infinity, memorySwapMax: Infinity,
});
const settle = () => new Promise((r) => setImmediate(r));

test('registry: adopts the slices\' units, lists them by name, counts per slice without a copy', async () => {
  const m = fakeManager(new Map(['b-2.scope', 'B-1.scope', 'a-10.scope', 'a-9.scope'].map((n) => [n, unit(n)])));
  m.units.set('x.scope', unit('x.scope', 'other.slice'));
  m.units.set('y.scope', unit('y.scope', 'more.slice'));
  const r = new SessionRegistry(/** @type {any} */ (m), ['sessions.slice', 'more.slice'], undefined);
  await r.start();
  assert.deepEqual(r.list().map((s) => s.unit), ['B-1.scope', 'a-10.scope', 'a-9.scope', 'b-2.scope', 'y.scope'], 'code-unit order, other.slice left out');
  assert.equal(r.countInSlice('sessions.slice'), 4);
  assert.equal(r.countInSlice('more.slice'), 1);
  assert.equal(r.countInSlice('other.slice'), 0);
  assert.equal([...r.values()].length, 5);
  assert.equal(r.get('a-9')?.unit, 'a-9.scope', 'found by session id too');
});

test('registry: a removed unit leaves, a new invocation under the same name is a new session', async () => {
  const m = fakeManager(new Map([['s.scope', unit('s.scope')]]));
  const r = new SessionRegistry(/** @type {any} */ (m), ['sessions.slice'], undefined);
  const seen = [];
  r.on('added', (s) => seen.push(`+${s.unit}:${s.invocationId[0]}`));
  r.on('removed', (s) => seen.push(`-${s.unit}`));
  await r.start();
  m.units.set('s.scope', unit('s.scope', 'sessions.slice', 'b'.repeat(32)));
  m.fire({ type: 'unit-changed', unit: 's.scope', changed: ['InvocationID'] });
  await settle();
  m.fire({ type: 'unit-removed', unit: 's.scope' });
  assert.deepEqual(seen, ['+s.scope:a', '-s.scope', '+s.scope:b', '-s.scope']);
  assert.equal(r.countInSlice('sessions.slice'), 0);
});
