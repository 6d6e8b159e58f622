// @ts-check
'use strict';
// Stall episodes and onset-to-verdict from the detectors' verdicts (src/metrics/from-verdict.ts),
// fed by the real detectors.
const test = require('node:test');
const assert = require('node:assert/strict');
const { sessionVerdictFigures, sliceEpisodeScope } = require('../../../dist/metrics/from-verdict.js');
const { step, initialState } = require('../../../dist/stall/detector.js');
const { parseConfig } = require('../../../dist/config/load.js');

const cfg = parseConfig({}, 'defaults').detector;
const MiB = 2 ** 20;

test("a session's standing-still verdict begins an episode, observed from the detector's onset on the samples' clock", () => {
  let s = { atMs: 1000, currentBytes: 63 * MiB, highBytes: 64 * MiB, maxBytes: Infinity, swapMaxBytes: 0, anonBytes: 63 * MiB, shmemBytes: 0, fileBytes: 0, ownHighEvents: 0, pressureFullUs: 0, pressureSomeUs: 0, cpuUsageUs: 0, unitsInSlice: 2, measure: 'psi' };
  let st = initialState();
  const out = [];
  for (let i = 0; i < 3; i++) {
    const [next, v] = step(st, s, cfg);
    st = next;
    out.push(sessionVerdictFigures(v, s));
    s = { ...s, atMs: s.atMs + 2000, ownHighEvents: s.ownHighEvents + 10, pressureFullUs: s.pressureFullUs + 1_200_000 };
  }
  assert.deepEqual(out[0], { episode: false, onsetToVerdictS: undefined }, 'first sample');
  assert.deepEqual(out[1], { episode: false, onsetToVerdictS: undefined }, 'one hot window');
  assert.deepEqual(out[2], { episode: true, onsetToVerdictS: 4 }, 'two windows of 2 s from onset to verdict');
});

test('a standing-still verdict without a known onset still begins an episode, with nothing to observe', () => {
  const v = { event: 'standing-still', state: 'standing-still', window: undefined, hotWindows: 2, deadlineRemainingMs: 1, explain: '' };
  assert.deepEqual(sessionVerdictFigures(v, { atMs: 5 }), { episode: true, onsetToVerdictS: undefined });
});

test("a slice's episode: slice or machine by its cause; a critical verdict begins one only when it starts the episode", () => {
  const ep = (cause, startedAtMs) => ({ startedAtMs, endsAtMs: startedAtMs, cause, critical: cause === 'machine', currentAtStart: 0, membersAtStart: {} });
  const at = { atMs: 10_000 };
  assert.equal(sliceEpisodeScope({ event: 'standing-still', episode: ep('slice-brake', 10_000) }, at), 'slice');
  assert.equal(sliceEpisodeScope({ event: 'standing-still', episode: ep('slice-ceiling', 10_000) }, at), 'slice');
  assert.equal(sliceEpisodeScope({ event: 'standing-still', episode: ep('machine', 10_000) }, at), 'machine');
  assert.equal(sliceEpisodeScope({ event: 'critical', episode: ep('machine', 10_000) }, at), 'machine', 'begun critical');
  assert.equal(sliceEpisodeScope({ event: 'critical', episode: ep('machine', 4_000) }, at), undefined, 'an episode running since 4 s escalated: counted when it began');
  for (const event of ['window', 'deadline-expired', 'cleared', 'progress', 'first-sample']) assert.equal(sliceEpisodeScope({ event, episode: ep('slice-brake', 10_000) }, at), undefined, event);
});
