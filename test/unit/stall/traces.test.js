// @ts-check
'use strict';
// The detector replays real recordings from the guest and reaches the verdict a person would.
const test = require('node:test');
const assert = require('node:assert/strict');
const { step, initialState } = require('../../../dist/stall/detector.js');
const { parseConfig } = require('../../../dist/config/load.js');
const { loadTrace, samplesOf } = require('../../support/traces.js');

const cfg = parseConfig({}, 'defaults').detector;

/** Run the detector over samples; returns every verdict with its sample time. */
function replay(samples, config = cfg) {
  let s = initialState();
  const out = [];
  for (const sample of samples) {
    const [next, v] = step(s, sample, config);
    s = next;
    out.push({ t: sample.atMs, ...v });
  }
  return out;
}
const events = (vs, e) => vs.filter((v) => v.event === e);

test('wedged: a command stuck against its own brake is standing still within two windows of its first stall', () => {
  const vs = replay(samplesOf(loadTrace('wedged'), 'wedged.scope'));
  const still = events(vs, 'standing-still');
  assert.equal(still.length, 1, 'one episode, not one per window');
  assert.ok(still[0].t <= 6000, `standing still at ${still[0].t} ms`);
  assert.deepEqual(still[0].window.evidence.includes('own-high-moved'), true);
  assert.ok(vs.filter((v) => v.t > still[0].t).every((v) => v.state === 'standing-still'), 'stays standing still to the end');
  assert.equal(events(vs, 'cleared').length, 0);
});

test('wedged with a 20 s grace: the deadline expires', () => {
  const vs = replay(samplesOf(loadTrace('wedged'), 'wedged.scope'), { ...cfg, graceS: 20 });
  const expired = events(vs, 'deadline-expired');
  const still = events(vs, 'standing-still')[0];
  assert.ok(expired.length > 0);
  assert.ok(expired[0].t - still.t >= 20_000 && expired[0].t - still.t < 22_500, `expired ${expired[0].t - still.t} ms after`);
});

test('page cache: dd under the same brake is never hot (the anon fuse)', () => {
  const vs = replay(samplesOf(loadTrace('pagecache'), 'cache.scope'));
  assert.ok(vs.length >= 4, 'the trace has windows');
  assert.deepEqual(vs.filter((v) => v.window?.kind === 'hot'), []);
  assert.ok(vs.some((v) => v.window?.reason.includes('page cache') || v.window?.reason.includes('below 0.1')));
});

test('neighbour: the innocent session throttled by the slice\'s brake is never marked; nor is the greedy one by its own brake', () => {
  const records = loadTrace('neighbour');
  const innocent = replay(samplesOf(records, 'innocent.scope'));
  assert.deepEqual(innocent.filter((v) => v.state === 'standing-still' || v.window?.kind === 'hot'), []);
  // It was under real pressure: the own-doing rule is what kept it clear.
  assert.ok(innocent.some((v) => (v.window?.share ?? 0) > 0.5 && v.window?.reason.includes('not its own brake')));
  const greedy = replay(samplesOf(records, 'greedy.scope'));
  assert.deepEqual(events(greedy, 'standing-still'), []);
});

test('healthy: every window is clear', () => {
  const vs = replay(samplesOf(loadTrace('healthy'), 'healthy.scope'));
  assert.ok(vs.length > 20);
  assert.deepEqual(vs.filter((v) => v.window && v.window.kind !== 'clear'), []);
});

test('raised: standing still until the brake is raised at 30 s, then cleared', () => {
  const vs = replay(samplesOf(loadTrace('raised'), 'raised.scope'));
  const still = events(vs, 'standing-still');
  assert.equal(still.length, 1);
  assert.ok(still[0].t < 30_000);
  const cleared = events(vs, 'cleared');
  assert.equal(cleared.length, 1);
  assert.ok(cleared[0].t > 30_000 && cleared[0].t < 36_000, `cleared at ${cleared[0].t} ms`);
});

// The same recordings as the PSI feed takes them (test/support/feed-replay.js): asleep until the
// trigger or the own brake would wake it, then 0.5 s onset windows, 2 s ones while a deadline runs.
const { replayFeed } = require('../../support/feed-replay.js');
/** The seed design on the same feed: 2 s windows from the wake, two of them hot. */
const seed = { ...cfg, onsetWindowS: cfg.windowS, onsetHotWindows: cfg.hotWindowsToStall };

test('on the feed, wedged: standing still 1.5 s after the wake, 2.5 s sooner than two 2 s windows, once', () => {
  const vs = replayFeed(loadTrace('wedged'), 'wedged.scope', cfg);
  const wake = vs.find((v) => v.event === 'wake');
  const still = events(vs, 'standing-still');
  assert.equal(still.length, 1);
  assert.ok(still[0].t - wake.t <= 1500 + 125, `verdict ${still[0].t - wake.t} ms after the wake`);
  assert.equal(still[0].cadence, 'onset');
  const seedStill = events(replayFeed(loadTrace('wedged'), 'wedged.scope', seed), 'standing-still')[0];
  assert.ok(seedStill.t - still[0].t >= 2000, `seed ${seedStill.t} ms, onset ${still[0].t} ms`);
  const after = vs.filter((v) => v.t > still[0].t && v.event !== 'wake');
  assert.ok(after.length > 10 && after.every((v) => v.state === 'standing-still' && v.cadence === 'steady'), 'the deadline runs on 2 s windows to the end');
});

test('on the feed, no new false verdict: page cache, the innocent and the greedy neighbour, healthy: no hot onset window', () => {
  for (const [trace, unit] of [['pagecache', 'cache.scope'], ['neighbour', 'innocent.scope'], ['neighbour', 'greedy.scope'], ['healthy', 'healthy.scope']]) {
    const vs = replayFeed(loadTrace(trace), unit, cfg);
    assert.deepEqual(vs.filter((v) => v.window?.kind === 'hot' || v.state === 'standing-still').map((v) => v.t), [], `${trace} ${unit}`);
  }
  // the innocent was woken, and judged under real pressure: the own-doing rule kept it clear
  const innocent = replayFeed(loadTrace('neighbour'), 'innocent.scope', cfg);
  assert.ok(innocent.some((v) => v.cadence === 'onset' && (v.window?.share ?? 0) > 0.5 && v.window?.reason.includes('not its own brake')));
});

test('on the feed, raised: standing still before the raise at 30 s, cleared within 2.5 s of the brake lifting', () => {
  const vs = replayFeed(loadTrace('raised'), 'raised.scope', cfg);
  const still = events(vs, 'standing-still');
  assert.equal(still.length, 1);
  assert.ok(still[0].t < 3000, `standing still at ${still[0].t} ms`);
  const cleared = events(vs, 'cleared');
  assert.equal(cleared.length, 1);
  assert.ok(cleared[0].t > 30_000 && cleared[0].t < 32_500, `cleared at ${cleared[0].t} ms`);
});

test('bursts: every stall the command ended itself within 1.4 s is ignored, every one of 2.5 s or more is caught; two 2 s windows ignored up to 2.8 s', () => {
  const { judgeStalls, marginOf } = require('../../support/feed-replay.js');
  const records = loadTrace('bursts');
  const judged = judgeStalls(records, 'bursts.scope', cfg);
  assert.equal(judged.length, 8, 'the recording has eight stalls');
  for (const j of judged) {
    if (j.lengthMs <= 1400) assert.equal(j.caughtAtMs, undefined, `a ${j.lengthMs} ms burst at ${j.fromMs} ms was judged a stall`);
    else assert.ok(j.caughtAtMs !== undefined && j.caughtAtMs - j.fromMs <= 2500, `the ${j.lengthMs} ms stall at ${j.fromMs} ms was caught at ${j.caughtAtMs}`);
  }
  const m = marginOf(judged);
  assert.ok(m.longestIgnoredMs !== undefined && m.shortestCaughtMs !== undefined && m.longestIgnoredMs < m.shortestCaughtMs, JSON.stringify(m));
  const s = marginOf(judgeStalls(records, 'bursts.scope', seed));
  assert.ok(s.longestIgnoredMs >= 2700 && s.shortestCaughtMs >= 3500, `the seed's margin ${JSON.stringify(s)}`);
});

test('on the feed with every window 0.6 s late (sbd behind, bench:storm): wedged and raised stand still on the second hot window; no burst of 1.4 s or less and no never-mark trace is judged', () => {
  const { judgeStalls } = require('../../support/feed-replay.js');
  const late = { lateMs: 600 };
  for (const [trace, unit] of [['wedged', 'wedged.scope'], ['raised', 'raised.scope']]) {
    const still = events(replayFeed(loadTrace(trace), unit, cfg, late), 'standing-still');
    assert.equal(still.length, 1, `${trace}: one verdict`);
    assert.equal(still[0].hotWindows, 2, `${trace}: two late hot windows held more stall than three on-time ones (lateRunStandsStill)`);
    assert.equal(still[0].cadence, 'onset');
  }
  for (const j of judgeStalls(loadTrace('bursts'), 'bursts.scope', cfg, late)) {
    if (j.lengthMs <= 1400) assert.equal(j.caughtAtMs, undefined, `a ${j.lengthMs} ms burst at ${j.fromMs} ms was judged a stall`);
    else assert.ok(j.caughtAtMs !== undefined, `the ${j.lengthMs} ms stall at ${j.fromMs} ms was not caught`);
  }
  for (const [trace, unit] of [['pagecache', 'cache.scope'], ['neighbour', 'innocent.scope'], ['neighbour', 'greedy.scope'], ['healthy', 'healthy.scope']]) {
    const vs = replayFeed(loadTrace(trace), unit, cfg, late);
    assert.deepEqual(vs.filter((v) => v.window?.kind === 'hot' || v.state === 'standing-still').map((v) => v.t), [], `${trace} ${unit}`);
  }
});
