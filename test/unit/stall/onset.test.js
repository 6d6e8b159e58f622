// @ts-check
'use strict';
// The onset cadence (issue 15, item 1): from a PSI wake to a verdict the detector judges short
// windows (onsetWindowS, 0.5 s) and needs onsetHotWindows (3) of them hot in a row; timer
// sampling and every window of a running deadline keep the steady rules (two 2 s windows).
const test = require('node:test');
const assert = require('node:assert/strict');
const { step, initialState, cadenceOf, windowMsOf, resetEpisode, lateRunStallMs } = require('../../../dist/stall/detector.js');
const { parseConfig, ConfigError } = require('../../../dist/config/load.js');

const cfg = parseConfig({}, 'defaults').detector;
const MiB = 2 ** 20;

/** Samples of a session stalled at `share` against its own brake, every `dt` ms, at `cadence`. */
function stalled(n, { dt, share = 0.8, cadence }) {
  const out = [];
  for (let i = 0; i <= n; i++) {
    out.push({
      atMs: i * dt, currentBytes: 64 * MiB, highBytes: 64 * MiB, maxBytes: Infinity, swapMaxBytes: 0,
      anonBytes: 64 * MiB, shmemBytes: 0, fileBytes: 0, ownHighEvents: i * 10,
      pressureFullUs: Math.round(i * dt * 1000 * share), pressureSomeUs: 0, cpuUsageUs: 0,
      unitsInSlice: 2, measure: 'psi', cadence,
    });
  }
  return out;
}

function run(samples, config = cfg) {
  let s = initialState();
  return samples.map((x) => {
    const [next, v] = step(s, x, config);
    s = next;
    return v;
  });
}

test('the defaults: 0.5 s onset windows, three of them hot; the trigger and the steady windows stay 2 s', () => {
  assert.equal(cfg.onsetWindowS, 0.5);
  assert.equal(cfg.onsetHotWindows, 3);
  assert.equal(cfg.windowS, 2);
  assert.equal(cfg.hotWindowsToStall, 2);
});

test('onset cadence: three hot 0.5 s windows make a stall, two do not', () => {
  const vs = run(stalled(3, { dt: 500, cadence: 'onset' }));
  assert.deepEqual(vs.map((v) => v.event), ['first-sample', 'window', 'window', 'standing-still']);
  assert.equal(vs[3].onsetMs, 0, 'the onset is where the first hot window began');
});

test('steady cadence keeps the seed rule: two hot 2 s windows', () => {
  const vs = run(stalled(2, { dt: 2000, cadence: 'steady' }));
  assert.deepEqual(vs.map((v) => v.event), ['first-sample', 'window', 'standing-still']);
  const none = run(stalled(2, { dt: 2000, cadence: undefined }));
  assert.equal(none[2].event, 'standing-still', 'no cadence given: steady');
});

test('onsetHotWindows and onsetWindowS are the config\'s', () => {
  const four = { ...cfg, onsetHotWindows: 4 };
  assert.equal(run(stalled(3, { dt: 500, cadence: 'onset' }), four)[3].event, 'window');
  assert.equal(run(stalled(4, { dt: 500, cadence: 'onset' }), four)[4].event, 'standing-still');
  // a 0.4 s window is judged at 0.5 s onset windows (at least half), but not at 1 s ones
  assert.equal(run(stalled(1, { dt: 400, cadence: 'onset' }))[1].event, 'window');
  assert.equal(run(stalled(1, { dt: 400, cadence: 'onset' }), { ...cfg, onsetWindowS: 1 })[1].event, 'short-window');
});

test('a window shorter than half an onset window is noise at the onset cadence, as half a 2 s one is at the steady one', () => {
  assert.equal(run(stalled(1, { dt: 200, cadence: 'onset' }))[1].event, 'short-window');
  assert.equal(run(stalled(1, { dt: 300, cadence: 'onset' }))[1].event, 'window');
  assert.equal(run(stalled(1, { dt: 900, cadence: 'steady' }))[1].event, 'short-window');
});

test('a short burst is not a stall: two hot onset windows, then a clear one, start nothing', () => {
  const samples = stalled(2, { dt: 500, cadence: 'onset' });
  const last = samples[2];
  samples.push({ ...last, atMs: 1500, ownHighEvents: last.ownHighEvents }); // no stall in the third window
  const vs = run(samples);
  assert.deepEqual(vs.map((v) => v.event), ['first-sample', 'window', 'window', 'window']);
  assert.equal(vs[3].state, 'clear');
  assert.equal(vs[3].hotWindows, 0);
});

test('cadenceOf: onset only on the PSI feed with no deadline running; windowMsOf gives each length', () => {
  const still = run(stalled(3, { dt: 500, cadence: 'onset' }));
  assert.equal(cadenceOf(initialState(), 'psi'), 'onset');
  assert.equal(cadenceOf(initialState(), 'timer'), 'steady');
  let s = initialState();
  for (const x of stalled(3, { dt: 500, cadence: 'onset' })) [s] = step(s, x, cfg);
  assert.equal(still[3].event, 'standing-still');
  assert.equal(cadenceOf(s, 'psi'), 'steady', 'a running deadline is judged on 2 s windows');
  assert.equal(cadenceOf(resetEpisode(s), 'psi'), 'onset', 'after an action the next episode starts short again');
  assert.equal(windowMsOf('onset', 'psi', cfg), 500);
  assert.equal(windowMsOf('steady', 'psi', cfg), 2000);
  assert.equal(windowMsOf('steady', 'timer', cfg), 5000);
});

test('config: onsetWindowS above windowS is refused, naming the key', () => {
  assert.throws(() => parseConfig({ detector: { onsetWindowS: 3 } }, 'test.json'), (e) => e instanceof ConfigError && /detector\.onsetWindowS/.test(e.message));
  assert.throws(() => parseConfig({ detector: { onsetHotWindows: 0 } }, 'test.json'), (e) => e instanceof ConfigError && /detector\.onsetHotWindows/.test(e.message));
});

/** Samples of a session against its own brake, one per window: `windows` as [ms long, full share]. */
function windowsOf(windows, cadence = 'onset') {
  const first = stalled(0, { dt: 0, cadence })[0];
  const out = [first];
  for (const [ms, share] of windows) {
    const prev = out[out.length - 1];
    out.push({ ...prev, atMs: prev.atMs + ms, ownHighEvents: prev.ownHighEvents + 10, pressureFullUs: prev.pressureFullUs + Math.round(ms * 1000 * share) });
  }
  return out;
}

test('late onset windows: two hot ones holding a stall that three on-time windows always catch (1.2 s) stand still on the second', () => {
  assert.ok(Math.abs(lateRunStallMs(cfg) - 1200) < 1e-6, `${lateRunStallMs(cfg)} ms`);
  // bench:storm's slowest session: windows of 1.1 s and 0.6 s where 0.5 s were due
  const vs = run(windowsOf([[1100, 1.0], [600, 0.97]]));
  assert.deepEqual(vs.map((v) => v.event), ['first-sample', 'window', 'standing-still']);
  assert.equal(vs[2].onsetMs, 0, 'the onset is still where the run\'s first hot window began');
  assert.match(vs[2].explain, /stalled 1\.68 s in the run; hot windows 2;/, 'the words say the run\'s stall');
});

test('late onset windows holding less than 1.2 s of stall keep the count of three', () => {
  const vs = run(windowsOf([[1000, 0.55], [1000, 0.55], [1000, 0.55]]));
  assert.deepEqual(vs.map((v) => v.event), ['first-sample', 'window', 'window', 'standing-still']);
});

test('on time, two hot onset windows never stand still, whatever their share (1 s of stall at most)', () => {
  const vs = run(windowsOf([[500, 1.0], [500, 1.0]]));
  assert.deepEqual(vs.map((v) => v.event), ['first-sample', 'window', 'window']);
});

test('late windows: a 1 s burst straddling two of them is no stall, though both are hot', () => {
  // 0.5 s of the burst in each 1.2 s window: share 0.42, hot, 1.0 s of stall in all
  const vs = run(windowsOf([[1200, 0.5 / 1.2], [1200, 0.5 / 1.2], [1200, 0]]));
  assert.deepEqual(vs.map((v) => v.event), ['first-sample', 'window', 'window', 'window']);
  assert.equal(vs[3].state, 'clear');
});

test('a clear window ends the run\'s stall: the windows before it do not count towards 1.2 s', () => {
  const vs = run(windowsOf([[1200, 1.0], [1200, 0], [1200, 0.3], [1200, 0.5]]));
  assert.deepEqual(vs.map((v) => v.event), ['first-sample', 'window', 'window', 'window', 'window'], 'would stand still on the last window had the first run\'s 1.2 s been kept');
  assert.equal(run(windowsOf([[1200, 1.0], [1200, 0.3]]))[2].event, 'standing-still', 'the same two windows in one run stand still (1.56 s)');
});

test('a warm window in a late run neither adds to its stall nor ends it', () => {
  // with onsetHotWindows 4 (lateRunStallMs 1.7 s) the late rule alone decides on the third hot window
  const four = { ...cfg, onsetHotWindows: 4 };
  const vs = run(windowsOf([[1000, 0.9], [1000, 0.15], [1000, 0.7], [1000, 0.45]]), four);
  assert.deepEqual(vs.map((v) => v.event), ['first-sample', 'window', 'window', 'window', 'standing-still'], '0.9 + 0.7 + 0.45 = 2.05 s over three hot windows, the warm 0.15 s not counted');
  const short = run(windowsOf([[1000, 0.6], [1000, 0.15], [1000, 0.7], [1000, 0.35]]), four);
  assert.equal(short[4].event, 'window', '0.6 + 0.7 + 0.35 = 1.65 s: below 1.7 s (1.8 s had the warm window counted), and three hot windows of four');
});

test('the late rule is the onset cadence\'s: steady windows keep the count of two', () => {
  const vs = run(windowsOf([[2000, 1.0]], 'steady'));
  assert.deepEqual(vs.map((v) => v.event), ['first-sample', 'window'], 'one hot steady window holding 2 s is not a stall');
});
