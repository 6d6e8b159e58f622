// @ts-check
'use strict';
// One session as sbd runs it, on a fake cgroup directory: its feed and the controller, built and
// wired as src/daemon/service.ts builds them (no clock passed: sbd's own), and helpers to take
// windows of true time (test/support/clocks.js moves the clocks).
const assert = require('node:assert/strict');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { SessionFeed } = require('../../dist/stall/feed.js');
const { BrakeController } = require('../../dist/daemon/controller.js');
const { parseConfig } = require('../../dist/config/load.js');

const MiB = 2 ** 20;
/** The detector's window and grace (sbd's defaults). */
const WINDOW_MS = 2000;
const GRACE_MS = 180_000;
/** 15 minutes: the step of the measurement. */
const STEP_MS = 15 * 60_000;
const { writeScopeFiles } = require('./fake-cgroup');
const BOOT_ID = fs.readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim();

/** A fake scope directory (under a fake slice) whose figures the test sets before each sample. */
function fakeCgroup() {
  const dir = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'sb-clock-')), 'w.scope');
  fs.mkdirSync(dir);
  const set = (/** @type {{fullUs?: number, ownHigh?: number, current?: number}} */ f) => writeScopeFiles(dir, f);
  set({});
  // Standing still against its own brake: each window 0.6 full, its own brake firing.
  let fullUs = 0;
  let ownHigh = 0;
  const stall = () => set({ fullUs: (fullUs += 0.6 * WINDOW_MS * 1000), ownHigh: (ownHigh += 50) });
  const idle = () => set({ fullUs, ownHigh });
  return { dir, stall, idle };
}

/**
 * sbd's parts for one session, wired as src/daemon/service.ts wires them (no clock passed).
 * @param {import('node:test').TestContext} t @param {string} cgroupDir @param {any} [rawConfig]
 */
function sbd(t, cgroupDir, rawConfig = { raise: { ceiling: '64M' } }) {
  const config = parseConfig(rawConfig, 'test');
  const told = [];
  const saved = [];
  const verdicts = [];
  const session = { unit: 'w.scope', id: 'w', invocationId: 'a'.repeat(32), slice: 'sessions.slice', cgroupDir, memoryHigh: 64 * MiB, memoryMax: Infinity, memorySwapMax: 0, agentFromRecord: false };
  const manager = { setMemory: async (_unit, props) => { session.memoryHigh = props.memoryHigh; } };
  const controller = new BrakeController({
    config, manager: /** @type {any} */ (manager), incidents: /** @type {any} */ ({ tell: (i) => told.push(i) }),
    sessions: () => [/** @type {any} */ (session)], save: (_unit, s) => saved.push(s), log: () => {},
  });
  const feed = new SessionFeed(cgroupDir, {
    config: config.detector,
    unitsInSlice: () => 2,
    onVerdict: (v, sample) => {
      verdicts.push({ ...v, atMs: sample.atMs });
      controller.onVerdict(/** @type {any} */ (session), feed, v, sample);
    },
    onGone: () => assert.fail('the fake cgroup is there'),
    log: () => {},
  });
  t.after(() => { feed.stop(); controller.forget(session.unit); });
  return { config, controller, feed, session, told, saved, verdicts, types: () => told.map((i) => i.type) };
}

/** One window of true time, then a sample; `before` runs first (a step of the wall clock, say). */
function windowThenSample(s, clock, cg, figures = cg.stall, before = () => {}) {
  before();
  clock.advance(WINDOW_MS);
  figures();
  return s.feed.sample();
}

/** Sample until the session stands still; its deadline's start (monotonic ms). */
function untilStandingStill(s, clock, cg) {
  s.feed.sample();
  for (let i = 0; i < 5; i++) if (windowThenSample(s, clock, cg)?.event === 'standing-still') return /** @type {any} */ (s.feed.state.deadline).startedAtMs;
  return assert.fail(`no standing-still: ${s.verdicts.map((v) => v.event).join(', ')}`);
}

module.exports = { MiB, WINDOW_MS, GRACE_MS, STEP_MS, BOOT_ID, fakeCgroup, sbd, windowThenSample, untilStandingStill };
