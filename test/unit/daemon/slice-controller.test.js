// @ts-check
'use strict';
// What sbd does when a slice stands still: raise the slice's brake only where allowed and with
// room; otherwise tell the slice and the culprit, and at the deadline stop the culprit's biggest
// command, never an innocent's. Fake manager and brakes; the real thing is guest test 36-slice.
const test = require('node:test');
const assert = require('node:assert/strict');
const { SliceController, planSliceRaise } = require('../../../dist/daemon/slice-controller.js');
const { parseConfig } = require('../../../dist/config/load.js');
const { initialSliceState } = require('../../../dist/slice/detector.js');

const MiB = 2 ** 20;
const GiB = 2 ** 30;
const settle = () => new Promise((r) => setImmediate(r));

const sample = (over = {}) => ({
  atMs: 10_000, currentBytes: 320 * MiB, highBytes: 320 * MiB, maxBytes: Infinity, anonBytes: 320 * MiB, shmemBytes: 0, highEvents: 9, maxEvents: 0,
  memAvailableBytes: 2 * GiB, memTotalBytes: 3 * GiB,
  members: [{ path: 'innocent.scope', currentBytes: 165 * MiB, fullUs: 0 }, { path: 'greedy.scope', currentBytes: 155 * MiB, fullUs: 0 }], ...over,
});
const episode = { startedAtMs: 10_000, endsAtMs: 20_000, cause: 'slice-brake', critical: false, currentAtStart: 320 * MiB, membersAtStart: { 'innocent.scope': 165 * MiB, 'greedy.scope': 20 * MiB } };

function setup(config) {
  const told = [];
  const raised = [];
  const stopped = [];
  const sessions = {
    '/cg/nbr.slice/innocent.scope': { unit: 'innocent.scope', id: 'innocent' },
    '/cg/nbr.slice/greedy.scope': { unit: 'greedy.scope', id: 'greedy' },
  };
  const c = new SliceController({
    config: parseConfig(config, 'test'),
    manager: /** @type {any} */ ({ setMemory: async (unit, props) => { raised.push([unit, props]); } }),
    incidents: /** @type {any} */ ({ tell: (i) => told.push(i) }),
    brakes: /** @type {any} */ ({ stopBiggest: async (session, _feed, why, termToKillS) => { stopped.push({ unit: session.unit, why, termToKillS }); } }),
    sessionAt: (dir) => (sessions[dir] ? { session: /** @type {any} */ (sessions[dir]), feed: undefined } : undefined),
    log: () => {},
  });
  const feed = { slice: 'nbr.slice', dir: '/cg/nbr.slice', state: { ...initialSliceState(), episode }, setState(s) { this.state = s; } };
  const fire = (event, s = sample()) => c.onVerdict(/** @type {any} */ (feed), /** @type {any} */ ({ event, state: 'standing-still', window: undefined, episode: feed.state.episode, explain: 'test' }), /** @type {any} */ (s));
  return { told, raised, stopped, feed, fire };
}

test('standing still, raising not allowed: the slice and the culprit are told; nothing is changed yet', async () => {
  const t = setup({});
  t.fire('standing-still');
  await settle();
  assert.deepEqual(t.raised, []);
  assert.deepEqual(t.told.map((i) => [i.type, i.unit]), [['slice-standing-still', 'nbr.slice'], ['culprit', 'greedy.scope']]);
  assert.equal(t.told[0].culprit, 'greedy.scope');
  assert.equal(t.told[0].rule, 'grew-most');
  assert.deepEqual(t.told[0].members.map((m) => m.path), ['innocent.scope', 'greedy.scope'], 'each member with its figures');
  assert.deepEqual(t.stopped, []);
});

test("standing still, raising allowed with room: the slice's brake goes up a step, nobody is stopped", async () => {
  const t = setup({ arbitration: { raiseSlice: true } });
  t.fire('standing-still');
  await settle();
  assert.deepEqual(t.raised, [['nbr.slice', { memoryHigh: 576 * MiB }]]);
  assert.deepEqual(t.told.map((i) => i.type), ['slice-brake-raised']);
  assert.equal(t.feed.state.episode, undefined, 'a new episode after the raise');
});

test('raising allowed without room: the culprit ladder runs instead', async () => {
  const t = setup({ arbitration: { raiseSlice: true } });
  t.fire('standing-still', sample({ memAvailableBytes: 1 * GiB }));
  await settle();
  assert.deepEqual(t.raised, []);
  assert.deepEqual(t.told.map((i) => i.type), ['slice-standing-still', 'culprit']);
});

test("at the deadline the culprit's biggest command is stopped, with the slice's figures; never the innocent's", async () => {
  const t = setup({});
  t.fire('deadline-expired');
  t.fire('deadline-expired'); // the next window while the stop runs: not a second stop
  await settle();
  assert.equal(t.stopped.length, 1);
  assert.equal(t.stopped[0].unit, 'greedy.scope');
  assert.equal(t.stopped[0].why.slice, 'nbr.slice');
  assert.equal(t.stopped[0].why.rule, 'grew-most');
  assert.equal(t.stopped[0].termToKillS, 30);
  await settle();
  assert.equal(t.feed.state.episode, undefined, 'the episode starts over after the stop');
});

test('the machine nearly out of memory: told, and the culprit stopped with the short SIGKILL grace', async () => {
  const t = setup({});
  t.feed.state = { ...t.feed.state, episode: { ...episode, cause: 'machine', critical: true, endsAtMs: 10_000 } };
  t.fire('critical', sample({ highBytes: Infinity, memAvailableBytes: 50 * MiB }));
  await settle();
  assert.deepEqual(t.told.map((i) => i.type), ['machine-short']);
  assert.equal(t.stopped[0].unit, 'greedy.scope');
  assert.equal(t.stopped[0].termToKillS, 2);
});

test('a culprit that is not a session sbd watches: told once, nothing stopped', async () => {
  const t = setup({});
  const s = sample({ members: [{ path: 'innocent.scope', currentBytes: 165 * MiB, fullUs: 0 }, { path: 'other.service', currentBytes: 155 * MiB, fullUs: 0 }] });
  t.fire('deadline-expired', s);
  t.fire('deadline-expired', s);
  await settle();
  assert.deepEqual(t.stopped, []);
  assert.deepEqual(t.told.map((i) => i.type), ['nothing-to-stop']);
  assert.match(t.told[0].message, /other\.service is judged the culprit, but it is not a session sbd watches/);
});

test('planSliceRaise: a step, within MemAvailable minus the reserve and a margin below MemoryMax', () => {
  assert.deepEqual(planSliceRaise(sample(), 256 * MiB, 1 * GiB, 128 * MiB), { toBytes: 576 * MiB, limitedBy: 'step' });
  assert.deepEqual(planSliceRaise(sample({ maxBytes: 528 * MiB }), 256 * MiB, 1 * GiB, 128 * MiB), { toBytes: 400 * MiB, limitedBy: "the slice's MemoryMax minus the margin" });
  assert.equal(planSliceRaise(sample({ maxBytes: 400 * MiB }), 256 * MiB, 1 * GiB, 128 * MiB).toBytes, undefined, 'never closer to the wall than the margin');
  const none = planSliceRaise(sample({ memAvailableBytes: 1 * GiB + 8 * MiB }), 256 * MiB, 1 * GiB, 128 * MiB);
  assert.equal(none.toBytes, undefined);
});

test('observe-only: the slice raise is told as a would-be action and nothing is changed', async () => {
  const t = setup({ observeOnly: true, arbitration: { raiseSlice: true } });
  t.fire('standing-still');
  await settle();
  assert.deepEqual(t.raised, []);
  assert.deepEqual(t.told.map((i) => [i.type, i.observeOnly]), [['slice-brake-raised', true]]);
});

test('a failed raise is logged with the error itself (pino\'s err serializer keeps its type and stack), not a string (issue 12, fault 9)', async () => {
  const logged = [];
  const c = new SliceController({
    config: parseConfig({ arbitration: { raiseSlice: true } }, 'test'),
    manager: /** @type {any} */ ({ setMemory: async () => { throw new Error('org.freedesktop.DBus.Error.AccessDenied: no'); } }),
    incidents: /** @type {any} */ ({ tell: () => {} }),
    brakes: /** @type {any} */ ({ stopBiggest: async () => {} }),
    sessionAt: () => undefined,
    log: (level, msg, fields) => logged.push({ level, msg, fields }),
  });
  const feed = { slice: 'nbr.slice', dir: '/cg/nbr.slice', state: { ...initialSliceState(), episode }, setState(s) { this.state = s; } };
  c.onVerdict(/** @type {any} */ (feed), /** @type {any} */ ({ event: 'standing-still', state: 'standing-still', window: undefined, episode, explain: 'test' }), /** @type {any} */ (sample()));
  await settle();
  await settle();
  const entry = logged.find((l) => l.msg === 'could not raise the slice brake');
  assert.ok(entry, 'the failure is logged');
  assert.ok(entry.fields.err instanceof Error, `err is the Error, got ${typeof entry.fields.err}`);
  assert.match(entry.fields.err.stack, /AccessDenied/);
});
