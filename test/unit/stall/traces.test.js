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
