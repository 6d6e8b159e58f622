// @ts-check
'use strict';
// An action in flight when its session is forgotten (the unit removed, or the kernel said its
// cgroup is gone) must not save the session's state again afterwards: the state file would keep
// a session that no longer exists. A fake user manager answers when the test says so.
const test = require('node:test');
const assert = require('node:assert/strict');
const { BrakeController } = require('../../../dist/daemon/controller.js');
const { parseConfig } = require('../../../dist/config/load.js');
const { initialState } = require('../../../dist/stall/detector.js');

const MiB = 2 ** 20;
const settle = () => new Promise((r) => setImmediate(r));

async function raiseFailsAfterForget(/** @type {boolean} */ withKnown) {
  const config = parseConfig({}, 'test');
  /** @type {Array<[string, unknown]>} */
  const saves = [];
  /** @type {() => void} */
  let answer = () => {};
  // systemd's answer once the unit is gone: the call fails, and the feed keeps its deadline
  const manager = { setMemory: () => new Promise((_, reject) => { answer = () => reject(new Error('org.freedesktop.systemd1.NoSuchUnit: Unit f.scope not loaded.')); }) };
  const session = { unit: 'f.scope', id: 'f', invocationId: 'a'.repeat(32), slice: 'sessions.slice', cgroupDir: '/nonexistent-sb-test/sessions.slice/f.scope', memoryHigh: 64 * MiB, memoryMax: Infinity, memorySwapMax: 0 };
  let sessions = [session];
  const c = new BrakeController({
    config, manager: /** @type {any} */ (manager), incidents: /** @type {any} */ ({ tell: () => {} }), sessions: () => /** @type {any} */ (sessions),
    // as the service wires it: one lookup by unit
    ...(withKnown ? { known: (/** @type {any} */ x) => sessions.find((y) => y.unit === x.unit) === x } : {}),
    save: (unit, s) => saves.push([unit, s]), log: () => {},
  });
  const feed = { state: initialState(), lastVerdict: undefined, setState(s) { this.state = s; } };
  const verdict = { event: 'standing-still', state: 'standing-still', explain: 'test', window: { kind: 'hot', share: 0.6, anonShare: 1, evidence: ['own-high-moved'] }, deadlineRemainingMs: 180_000 };
  feed.state = { ...feed.state, deadline: { startedAtMs: 0, endsAtMs: 180_000, currentAtStart: 64 * MiB } };
  c.onVerdict(/** @type {any} */ (session), /** @type {any} */ (feed), /** @type {any} */ (verdict), /** @type {any} */ ({ atMs: 0, highBytes: 64 * MiB, maxBytes: Infinity, currentBytes: 64 * MiB }));
  await settle();
  // the session ends while SetUnitProperties is under way: the service forgets it and its state
  sessions = [];
  c.forget('f.scope');
  saves.push(['f.scope', undefined]);
  const before = saves.length;
  answer();
  await settle();
  await settle();
  assert.deepEqual(saves.slice(before), [], 'nothing saved for a forgotten session');
  assert.equal(c.stopping('f.scope'), false);
}

test('controller: a raise that fails after its session was forgotten saves nothing (its deadline stays out of the state file)', () => raiseFailsAfterForget(false));
test('controller: the same with the service\'s lookup of a known session', () => raiseFailsAfterForget(true));
