// @ts-check
'use strict';
// Issue 12, fault 3, the freeze watch: a heartbeat's age is measured on the monotonic clock, so a
// step of the wall clock neither makes every agent "missing" at once (forward) nor hides a missing
// one for as long as the step (back). The watch is built as sbd builds it (no clock passed).
const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { FreezeWatch } = require('../../../dist/daemon/freeze-watch.js');
const { parseConfig } = require('../../../dist/config/load.js');
const { fakeClocks } = require('../../support/clocks.js');

const STEP_MS = 15 * 60_000;

/** The freeze watch of one session with a heartbeat, wired as src/daemon/service.ts wires it. */
function watch(t) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sb-beat-'));
  fs.writeFileSync(path.join(dir, 'cpu.stat'), 'usage_usec 1000\nuser_usec 500\nsystem_usec 500\n');
  const heartbeat = path.join(dir, 'beat');
  fs.writeFileSync(heartbeat, 'idle\n');
  const config = parseConfig({}, 'test');
  const told = [];
  const session = { unit: 'w.scope', id: 'w', cgroupDir: dir, heartbeat, agentPid: process.pid };
  const fw = new FreezeWatch(config, /** @type {any} */ ({ tell: (i) => told.push(i) }), () => [/** @type {any} */ (session)]);
  t.after(() => fw.stop());
  /** the agent writes its heartbeat now (by the wall clock, as the kernel stamps it) */
  const beat = () => { const s = Date.now() / 1000; fs.utimesSync(heartbeat, s, s); };
  return { check: () => fw.check(/** @type {any} */ (session)), beat, told, missingAfterMs: config.freeze.missingAfterS * 1000 };
}

test('a step of the wall clock forward does not make a fresh heartbeat missing', (t) => {
  const clock = fakeClocks(t);
  const w = watch(t);
  w.beat();
  w.check();
  clock.advance(30_000);
  clock.stepWall(STEP_MS);
  w.check();
  clock.advance(60_000);
  w.check();
  assert.deepEqual(w.told.map((i) => i.type), [], 'written 90 s ago: not missing');
  clock.advance(w.missingAfterMs - 90_000);
  w.check();
  assert.deepEqual(w.told.map((i) => i.type), ['missing'], 'missing once its age is missingAfterS');
  assert.match(w.told[0].message, /has not renewed its heartbeat for 3\.0 min/);
});

test('a step of the wall clock back does not hide a missing heartbeat', (t) => {
  const clock = fakeClocks(t);
  const w = watch(t);
  w.beat();
  w.check();
  clock.advance(30_000);
  clock.stepWall(-STEP_MS);
  w.check();
  clock.advance(w.missingAfterMs - 30_000);
  w.check();
  assert.deepEqual(w.told.map((i) => i.type), ['missing'], 'missing after missingAfterS, not 15 min later');
  w.beat(); // renewed, stamped by the stepped wall clock
  w.check();
  assert.deepEqual(w.told.map((i) => i.type), ['missing', 'recovered']);
});
