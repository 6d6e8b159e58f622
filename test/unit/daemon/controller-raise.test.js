// @ts-check
'use strict';
// The controller tells of a raise only once systemd has put it in force (a reader of the
// incident may look at the cgroup at once), never when it failed, and as a would-be action in
// observe-only mode. A fake user manager; the real raise is test/vm/guest/30-raise.
const test = require('node:test');
const assert = require('node:assert/strict');
const { BrakeController } = require('../../../dist/daemon/controller.js');
const { parseConfig } = require('../../../dist/config/load.js');
const { initialState } = require('../../../dist/stall/detector.js');

const MiB = 2 ** 20;
const settle = () => new Promise((r) => setImmediate(r));

function setup(observeOnly, setMemory) {
  const config = parseConfig({ observeOnly }, 'test');
  const told = [];
  const logs = [];
  const calls = [];
  const errs = [];
  const manager = { setMemory: (unit, props) => { calls.push([unit, props]); return setMemory(); } };
  const session = { unit: 'w.scope', id: 'w', invocationId: 'a'.repeat(32), slice: 'sessions.slice', cgroupDir: '/nonexistent-sb-test/sessions.slice/w.scope', memoryHigh: 64 * MiB, memoryMax: Infinity, memorySwapMax: 0 };
  const c = new BrakeController({ config, manager: /** @type {any} */ (manager), incidents: /** @type {any} */ ({ tell: (i) => told.push(i) }), sessions: () => [/** @type {any} */ (session)], save: () => {}, log: (level, msg, fields) => { logs.push(`${level}: ${msg}`); errs.push(fields?.err); } });
  const feed = { state: initialState(), lastVerdict: undefined, setState(s) { this.state = s; } };
  const verdict = { event: 'standing-still', state: 'standing-still', explain: 'test', window: { kind: 'hot', share: 0.6, anonShare: 1, evidence: 'own-high' }, deadlineRemainingMs: 180_000 };
  const sample = { atMs: 0, highBytes: 64 * MiB, maxBytes: Infinity, currentBytes: 64 * MiB };
  const fire = () => c.onVerdict(/** @type {any} */ (session), /** @type {any} */ (feed), /** @type {any} */ (verdict), /** @type {any} */ (sample));
  return { told, logs, errs, calls, session, fire, types: () => told.map((i) => i.type) };
}

test('controller: brake-raised is told after SetUnitProperties returned, not before', async () => {
  let done = () => {};
  const t = setup(false, () => new Promise((r) => { done = r; }));
  t.fire();
  await settle();
  assert.deepEqual(t.calls, [['w.scope', { memoryHigh: 320 * MiB }]]);
  assert.deepEqual(t.types(), ['standing-still'], 'the call is still under way: nothing said of a raise');
  done();
  await settle();
  assert.deepEqual(t.types(), ['standing-still', 'brake-raised']);
  assert.equal(t.told[1].toBytes, 320 * MiB);
  assert.equal(t.session.memoryHigh, 320 * MiB);
});

test('controller: a raise systemd refused is never told as done; it is logged', async () => {
  const t = setup(false, () => Promise.reject(new Error('org.freedesktop.DBus.Error.AccessDenied')));
  t.fire();
  await settle();
  await settle();
  assert.deepEqual(t.types(), ['standing-still']);
  assert.ok(t.logs.includes('warn: could not raise the brake'), t.logs.join('\n'));
  const err = t.errs[t.logs.indexOf('warn: could not raise the brake')];
  assert.ok(err instanceof Error && /AccessDenied/.test(err.stack ?? ''), 'logged as the Error (pino keeps its type and stack), not a string (issue 12, fault 9)');
  assert.equal(t.session.memoryHigh, 64 * MiB);
});

test('controller: observe-only tells the raise it would make and changes nothing', async () => {
  const t = setup(true, () => assert.fail('observe-only must not call systemd'));
  t.fire();
  await settle();
  assert.deepEqual(t.types(), ['standing-still', 'brake-raised']);
  assert.equal(t.told[1].observeOnly, true);
  assert.deepEqual(t.calls, []);
});
