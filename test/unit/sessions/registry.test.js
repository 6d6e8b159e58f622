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
    listLiveUnits: async () => [...units.keys()],
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

/** A manager whose getUnit answers only when the test says so, with the state of that moment. */
function slowManager() {
  const m = fakeManager(new Map());
  /** @type {Array<() => void>} */
  const waiting = [];
  m.getUnit = (u) => new Promise((resolve) => { const seen = m.units.get(u); waiting.push(() => resolve(seen)); });
  return { m, answer: async () => { while (waiting.length) waiting.shift()?.(); await settle(); } };
}

/** A registry over slowManager whose getUnit reads are counted. */
async function countingRegistry() {
  const { m, answer } = slowManager();
  const count = { lookups: 0 };
  const get = m.getUnit;
  m.getUnit = (u) => { count.lookups++; return get(u); };
  const r = new SessionRegistry(/** @type {any} */ (m), ['sessions.slice'], undefined);
  await r.start();
  return { m, answer, r, count };
}

test('registry: a unit that becomes active while its lookup is in flight is still adopted', async () => {
  // systemd sends UnitNew while a transient scope is still inactive, then PropertiesChanged once
  // it runs; a lookup begun at UnitNew reads "inactive", and the later event must not be lost.
  const { m, answer } = slowManager();
  const r = new SessionRegistry(/** @type {any} */ (m), ['sessions.slice'], undefined);
  await r.start();
  m.units.set('g.scope', { ...unit('g.scope'), activeState: 'inactive', controlGroup: '' });
  m.fire({ type: 'unit-new', unit: 'g.scope' });
  m.units.set('g.scope', unit('g.scope'));
  m.fire({ type: 'unit-changed', unit: 'g.scope', changed: ['ActiveState'] });
  await answer(); // the first lookup: what it read (inactive) is stale
  await answer(); // the second: active
  assert.deepEqual(r.list().map((s) => s.unit), ['g.scope']);
});

test('registry: a unit removed while its lookup is in flight is not brought back', async () => {
  const { m, answer } = slowManager();
  const r = new SessionRegistry(/** @type {any} */ (m), ['sessions.slice'], undefined);
  await r.start();
  m.units.set('h.scope', unit('h.scope'));
  m.fire({ type: 'unit-new', unit: 'h.scope' });
  m.units.delete('h.scope');
  m.fire({ type: 'unit-removed', unit: 'h.scope' });
  await answer(); // read while it was active: stale
  await answer(); // gone
  assert.equal(r.size, 0);
});

test('registry: a burst of events during one lookup costs one more lookup, not one each; a burst before it, one lookup', async () => {
  const { m, answer, r, count } = await countingRegistry();
  m.units.set('k.scope', unit('k.scope'));
  m.fire({ type: 'unit-changed', unit: 'k.scope', changed: ['ActiveState'] });
  await settle(); // its lookup begins
  for (let i = 0; i < 9; i++) m.fire({ type: 'unit-changed', unit: 'k.scope', changed: ['ActiveState'] });
  await settle();
  await answer();
  await answer();
  assert.equal(count.lookups, 2);
  assert.equal(r.size, 1);
  m.units.set('j.scope', unit('j.scope'));
  for (let i = 0; i < 10; i++) m.fire({ type: 'unit-changed', unit: 'j.scope', changed: ['ActiveState'] });
  assert.equal(r.eventsQueued, 1, 'queued once, its latest event');
  await settle();
  await answer();
  assert.equal(count.lookups, 3, 'one lookup');
  assert.equal(r.size, 2);
});

test("registry: events start at most EVENT_READS_IN_FLIGHT reads, on later turns of the event loop, never from inside the bus's handler (the storm's creation: sbd killed by its watchdog)", async () => {
  const { EVENT_READS_IN_FLIGHT } = require('../../../dist/sessions/registry.js');
  assert.equal(EVENT_READS_IN_FLIGHT, 16);
  const { m, answer, r, count } = await countingRegistry();
  let inFlight = 0;
  let most = 0;
  const get = m.getUnit;
  m.getUnit = async (u) => { inFlight++; most = Math.max(most, inFlight); try { return await get(u); } finally { inFlight--; } };
  for (let i = 0; i < 100; i++) {
    m.units.set(`s-${i}.scope`, unit(`s-${i}.scope`));
    m.fire({ type: 'unit-new', unit: `s-${i}.scope` });
  }
  assert.equal(count.lookups, 0, 'nothing read from inside the handler of the signals');
  assert.equal(r.eventsQueued, 100);
  let timerRan = false;
  setTimeout(() => { timerRan = true; }, 0);
  await settle();
  assert.equal(count.lookups, 16, 'sixteen reads started on the next turn');
  for (let i = 0; i < 40 && r.size < 100; i++) await answer();
  assert.equal(r.size, 100, 'every unit adopted in the end');
  assert.equal(most, 16, 'never more than sixteen reads unanswered');
  assert.equal(timerRan, true, 'timers ran meanwhile');
  assert.equal(r.eventsQueued, 0);
});

test('registry: adopts many a few lookups at a time, and says how far it is until done', async () => {
  // issue 15: 2,000 sessions are read 16 at a time, so that sbd answers its watchdog and callers
  // meanwhile; `adopting` is what status shows until the last one is read.
  const { m, answer } = slowManager();
  for (let i = 0; i < 40; i++) m.units.set(`a-${i}.scope`, unit(`a-${i}.scope`));
  let inFlight = 0;
  let most = 0;
  const get = m.getUnit;
  m.getUnit = async (u) => { inFlight++; most = Math.max(most, inFlight); try { return await get(u); } finally { inFlight--; } };
  /** @type {() => void} */
  let release = () => {};
  const list = m.listLiveUnits;
  m.listLiveUnits = () => new Promise((resolve) => { release = () => resolve(list()); });
  const r = new SessionRegistry(/** @type {any} */ (m), ['sessions.slice'], undefined);
  assert.equal(r.adopting, undefined, 'nothing to adopt before start');
  const starting = r.start();
  assert.deepEqual(r.adopting, { adopted: 0, listed: null }, 'adopting from the start, while systemd lists the units');
  release();
  await settle();
  assert.deepEqual(r.adopting, { adopted: 0, listed: 40 });
  await answer();
  assert.deepEqual(r.adopting, { adopted: 16, listed: 40 });
  assert.equal(r.size, 16, 'each adopted as it is read');
  await answer();
  await answer();
  await starting;
  assert.equal(r.adopting, undefined, 'done');
  assert.equal(r.size, 40);
  assert.equal(most, 16, 'never more than 16 lookups at once');
});

test('registry: a unit whose read failed while adopting is read once more before the adoption is done', async () => {
  const m = fakeManager(new Map([['p.scope', unit('p.scope')], ['q.scope', unit('q.scope')]]));
  const get = m.getUnit;
  let failures = 1;
  m.getUnit = async (u) => { if (u === 'p.scope' && failures-- > 0) throw new Error('org.freedesktop.DBus.Error.NoReply'); return get(u); };
  const warned = [];
  const r = new SessionRegistry(/** @type {any} */ (m), ['sessions.slice'], undefined, (msg, f) => warned.push(`${msg} ${f.unit}`));
  await r.start();
  assert.deepEqual(r.list().map((s) => s.unit), ['p.scope', 'q.scope'], 'not left unwatched');
  assert.deepEqual(warned, ['cannot read a unit from systemd p.scope']);
});

test('registry: a unit removed while the first listing runs is not adopted from that listing', async () => {
  // start() lists the slices' units; a UnitRemoved that arrives before the listing returns found
  // nothing to drop, and the listing (read before the removal) then adopted it for good.
  const m = fakeManager(new Map([['r.scope', unit('r.scope')], ['k.scope', unit('k.scope')]]));
  /** @type {() => void} */
  let release = () => {};
  const listed = [...m.units.keys()];
  m.listLiveUnits = () => new Promise((resolve) => { release = () => resolve(listed); });
  const r = new SessionRegistry(/** @type {any} */ (m), ['sessions.slice'], undefined);
  const starting = r.start();
  m.units.delete('r.scope');
  m.fire({ type: 'unit-removed', unit: 'r.scope' });
  release();
  await starting;
  await settle();
  assert.deepEqual(r.list().map((s) => s.unit), ['k.scope'], 'the removed unit is not a session');
});

test('registry: a unit changed while the first listing runs is taken as systemd says now, not as listed', async () => {
  const m = fakeManager(new Map([['n.scope', unit('n.scope')]]));
  /** @type {() => void} */
  let release = () => {};
  const listed = [...m.units.keys()];
  m.listLiveUnits = () => new Promise((resolve) => { release = () => resolve(listed); });
  const r = new SessionRegistry(/** @type {any} */ (m), ['sessions.slice'], undefined);
  const starting = r.start();
  m.units.set('n.scope', unit('n.scope', 'sessions.slice', 'b'.repeat(32))); // a new invocation meanwhile
  m.fire({ type: 'unit-changed', unit: 'n.scope', changed: ['InvocationID'] });
  release();
  await starting;
  await settle();
  assert.deepEqual(r.list().map((s) => `${s.unit}:${s.invocationId[0]}`), ['n.scope:b']);
});

test('registry: ended() drops a session the kernel says is gone at once, and a late lookup does not bring it back', async () => {
  // PSI trigger POLLERR, cgroup.events "populated 0", a cgroup vanished while sampling: the
  // kernel knows before systemd's UnitRemoved arrives; a PropertiesChanged lookup may still read
  // the unit as active.
  const m = fakeManager(new Map([['e.scope', unit('e.scope')]]));
  const r = new SessionRegistry(/** @type {any} */ (m), ['sessions.slice'], undefined);
  const seen = [];
  r.on('removed', (s) => seen.push(`-${s.unit}`));
  await r.start();
  const s = r.get('e.scope');
  assert.ok(s);
  assert.equal(r.ended(s, 'cgroup empty'), true);
  assert.deepEqual(seen, ['-e.scope']);
  assert.equal(r.size, 0);
  m.fire({ type: 'unit-changed', unit: 'e.scope', changed: ['ActiveState'] }); // still "active" in systemd
  await settle();
  assert.equal(r.size, 0, 'the same invocation is over');
  assert.equal(r.ended(s, 'again'), false, 'a second signal changes nothing');
  m.fire({ type: 'unit-removed', unit: 'e.scope' });
  m.units.set('e.scope', unit('e.scope', 'sessions.slice', 'c'.repeat(32)));
  m.fire({ type: 'unit-new', unit: 'e.scope' });
  await settle();
  assert.deepEqual(r.list().map((x) => x.invocationId[0]), ['c'], 'a new invocation behind the name is a new session');
});

test('registry: a change whose signal carries the state is taken without reading the whole unit (issue 15: the storm\'s stops)', async () => {
  const m = fakeManager(new Map([['l.scope', unit('l.scope')], ['o.scope', unit('o.scope')]]));
  const reads = [];
  const get = m.getUnit;
  m.getUnit = (u) => { reads.push(`unit ${u}`); return get(u); };
  /** @type {any} */ (m).getUnitLimits = async (u) => { reads.push(`limits ${u}`); const x = m.units.get(u); return x && { memoryHigh: x.memoryHigh, memoryMax: x.memoryMax, memorySwapMax: x.memorySwapMax }; };
  const r = new SessionRegistry(/** @type {any} */ (m), ['sessions.slice'], undefined);
  const seen = [];
  r.on('added', (s) => seen.push(`+${s.unit}`));
  r.on('removed', (s) => seen.push(`-${s.unit}`));
  await r.start();
  reads.length = 0;
  // still live, the same invocation: only the limits read (someone raised its brake)
  m.units.set('l.scope', { ...unit('l.scope'), memoryHigh: 1 << 29 });
  m.fire({ type: 'unit-changed', unit: 'l.scope', changed: ['ActiveState', 'InvocationID'], activeState: 'active', invocationId: 'a'.repeat(32) });
  await settle();
  await settle();
  assert.deepEqual(reads, ['limits l.scope']);
  assert.equal(r.get('l')?.memoryHigh, 1 << 29, 'its limits followed');
  // stopping: dropped at once, nothing read
  m.fire({ type: 'unit-changed', unit: 'o.scope', changed: ['ActiveState'], activeState: 'deactivating', invocationId: 'a'.repeat(32) });
  await settle();
  assert.deepEqual(seen, ['+l.scope', '+o.scope', '-o.scope']);
  // an unknown unit going down (not a session): nothing read, nothing added
  m.fire({ type: 'unit-changed', unit: 'other.service', changed: ['ActiveState'], activeState: 'inactive' });
  await settle();
  assert.deepEqual(reads, ['limits l.scope']);
  // a new invocation, a unit not known and live, or a signal without the state: read it all
  m.units.set('l.scope', unit('l.scope', 'sessions.slice', 'b'.repeat(32)));
  m.fire({ type: 'unit-changed', unit: 'l.scope', changed: ['InvocationID'], activeState: 'active', invocationId: 'b'.repeat(32) });
  await settle();
  m.units.set('n.scope', unit('n.scope'));
  m.fire({ type: 'unit-changed', unit: 'n.scope', changed: ['ActiveState'], activeState: 'active', invocationId: 'a'.repeat(32) });
  m.fire({ type: 'unit-changed', unit: 'o.scope', changed: ['SubState'] });
  await settle();
  assert.deepEqual(reads, ['limits l.scope', 'unit l.scope', 'unit n.scope', 'unit o.scope']);
  assert.deepEqual(seen, ['+l.scope', '+o.scope', '-o.scope', '-l.scope', '+l.scope', '+n.scope', '+o.scope']);
});

test('registry: an event while the limits are read makes a whole read after it', async () => {
  const m = fakeManager(new Map([['p.scope', unit('p.scope')]]));
  let release = () => {};
  const reads = [];
  /** @type {any} */ (m).getUnitLimits = (u) => { reads.push(`limits ${u}`); return new Promise((resolve) => { release = () => resolve({ memoryHigh: 1, memoryMax: 2, memorySwapMax: 3 }); }); };
  const get = m.getUnit;
  const r = new SessionRegistry(/** @type {any} */ (m), ['sessions.slice'], undefined);
  await r.start();
  m.getUnit = (u) => { reads.push(`unit ${u}`); return get(u); };
  m.fire({ type: 'unit-changed', unit: 'p.scope', changed: ['ActiveState'], activeState: 'active', invocationId: 'a'.repeat(32) });
  await settle(); // its limits' read begins
  m.units.set('p.scope', { ...unit('p.scope'), activeState: 'deactivating' });
  m.fire({ type: 'unit-changed', unit: 'p.scope', changed: ['ActiveState'], activeState: 'deactivating', invocationId: 'a'.repeat(32) });
  release();
  for (let i = 0; i < 5; i++) await settle();
  assert.deepEqual(reads, ['limits p.scope', 'unit p.scope'], 'read again after the limits');
  assert.equal(r.size, 0, 'and dropped: it is stopping');
});

test('registry: a live unit read once outside the slices is not read again for a change of the same invocation (sbd.service at each STATUS=)', async () => {
  const m = fakeManager(new Map([['sbd.service', unit('sbd.service', 'app.slice', 'c'.repeat(32))]]));
  const reads = [];
  const get = m.getUnit;
  m.getUnit = (u) => { reads.push(u); return get(u); };
  const r = new SessionRegistry(/** @type {any} */ (m), ['sessions.slice'], undefined);
  await r.start();
  reads.length = 0;
  const changed = (inv, state = 'active') => m.fire({ type: 'unit-changed', unit: 'sbd.service', changed: ['ActiveState', 'InvocationID'], activeState: state, invocationId: inv });
  for (let i = 0; i < 5; i++) changed('c'.repeat(32));
  await settle();
  assert.deepEqual(reads, [], 'read while adopting, outside the slices: the same invocation again reads nothing');
  m.units.set('sbd.service', unit('sbd.service', 'app.slice', 'd'.repeat(32)));
  changed('d'.repeat(32));
  await settle();
  changed('d'.repeat(32));
  await settle();
  assert.deepEqual(reads, ['sbd.service'], 'a new invocation: read once');
  m.fire({ type: 'unit-removed', unit: 'sbd.service' });
  changed('d'.repeat(32));
  await settle();
  assert.equal(reads.length, 2, 'removed: forgotten, read again');
  assert.equal(r.size, 0);
});

test('registry: events with their state during a new unit\'s lookup are taken from the signal, not read again; without it, or of another invocation, read again', async () => {
  const { m, answer, r, count } = await countingRegistry();
  const inv = 'a'.repeat(32);
  const changed = (u, activeState, invocationId = inv) => m.fire({ type: 'unit-changed', unit: u, changed: ['ActiveState'], activeState, invocationId });
  // a transient scope: UnitNew while systemd starts it (read inactive), then activating, active
  m.units.set('t.scope', { ...unit('t.scope'), activeState: 'inactive' });
  m.fire({ type: 'unit-new', unit: 't.scope' });
  await settle(); // its lookup begins
  changed('t.scope', 'activating');
  changed('t.scope', 'active');
  await answer();
  assert.equal(count.lookups, 1, 'one read: the state is the last signal\'s');
  assert.deepEqual(r.list().map((s) => s.unit), ['t.scope']);
  // the last signal says it stopped: not adopted, still one read
  m.units.set('u.scope', { ...unit('u.scope'), activeState: 'active' });
  m.fire({ type: 'unit-new', unit: 'u.scope' });
  await settle();
  changed('u.scope', 'deactivating');
  await answer();
  assert.equal(count.lookups, 2);
  assert.equal(r.get('u'), undefined, 'stopping: not a session');
  // one event without the values: read again
  m.units.set('v.scope', { ...unit('v.scope'), activeState: 'inactive' });
  m.fire({ type: 'unit-new', unit: 'v.scope' });
  await settle();
  changed('v.scope', 'activating');
  m.fire({ type: 'unit-changed', unit: 'v.scope', changed: ['ActiveState'] });
  m.units.set('v.scope', unit('v.scope'));
  await answer();
  await answer();
  assert.equal(count.lookups, 4, 'read twice');
  assert.ok(r.get('v'));
  // a read of another invocation than the signal's (restarted meanwhile): read again
  m.units.set('w.scope', { ...unit('w.scope', 'sessions.slice', 'b'.repeat(32)), activeState: 'inactive' });
  m.fire({ type: 'unit-new', unit: 'w.scope' });
  await settle();
  m.units.set('w.scope', unit('w.scope', 'sessions.slice', 'c'.repeat(32)));
  changed('w.scope', 'active', 'c'.repeat(32));
  await answer();
  await answer();
  assert.equal(count.lookups, 6);
  assert.equal(r.get('w')?.invocationId, 'c'.repeat(32));
  // no cgroup in the first read (systemd had not made it yet): read again
  m.units.set('x.scope', { ...unit('x.scope'), activeState: 'inactive', controlGroup: '' });
  m.fire({ type: 'unit-new', unit: 'x.scope' });
  await settle();
  m.units.set('x.scope', unit('x.scope'));
  changed('x.scope', 'active');
  await answer();
  await answer();
  assert.equal(count.lookups, 8);
  assert.ok(r.get('x'));
});

test('registry: of the read\'s state and an event\'s during the read, the later in the unit\'s life is taken; a live signal without an InvocationID is read in full', async () => {
  const { m, answer, r, count } = await countingRegistry();
  const inv = 'a'.repeat(32);
  // read while it already stops; the event of its start came during the read (older): not adopted
  m.units.set('y.scope', { ...unit('y.scope'), activeState: 'deactivating' });
  m.fire({ type: 'unit-new', unit: 'y.scope' });
  await settle(); // its read begins
  m.fire({ type: 'unit-changed', unit: 'y.scope', changed: ['ActiveState'], activeState: 'active', invocationId: inv });
  await answer();
  assert.equal(count.lookups, 1);
  assert.equal(r.get('y'), undefined, 'deactivating is later than active: not a session');
  // a known session, a live signal without its InvocationID: read it all (a restart would be missed)
  m.units.set('z.scope', unit('z.scope'));
  m.fire({ type: 'unit-new', unit: 'z.scope' });
  await answer();
  const before = count.lookups;
  /** @type {any} */ (m).getUnitLimits = async () => ({ memoryHigh: 1, memoryMax: 2, memorySwapMax: 3 });
  m.fire({ type: 'unit-changed', unit: 'z.scope', changed: ['ActiveState'], activeState: 'active' });
  await answer();
  assert.equal(count.lookups, before + 1, 'read in full');
});
