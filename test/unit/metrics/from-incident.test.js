// @ts-check
'use strict';
// What each incident adds to sbd's counters (src/metrics/from-incident.ts).
const test = require('node:test');
const assert = require('node:assert/strict');
const { incrementsFor, stopReason } = require('../../../dist/metrics/from-incident.js');

const incident = (type, figures = {}, observeOnly = false) => ({ type, unit: 'a.scope', session: 'a', atMs: 0, message: '', observeOnly, ...figures });
const steps = (type, figures, observeOnly) => incrementsFor(incident(type, figures, observeOnly)).map((s) => `${s.counter}${JSON.stringify(s.labels)}+${s.by}`);

test('each verdict incident counts once under its own type', () => {
  for (const v of ['standing-still', 'cleared', 'slice-standing-still', 'slice-cleared', 'culprit', 'machine-short']) {
    assert.deepEqual(steps(v), [`verdicts{"verdict":"${v}"}+1`], v);
  }
});

test('raises, lowerings and stops count by scope and reason; observe-only counts none of them', () => {
  assert.deepEqual(steps('brake-raised'), ['brakeRaises{"scope":"session"}+1']);
  assert.deepEqual(steps('slice-brake-raised'), ['brakeRaises{"scope":"slice"}+1']);
  assert.deepEqual(steps('brake-lowered'), ['brakeLowerings{"scope":"session"}+1']);
  assert.deepEqual(steps('subtree-stopped', { evidence: ['near-own-brake'] }), ['stops{"reason":"own-brake"}+1']);
  assert.deepEqual(steps('subtree-stopped', { slice: 'sessions.slice', critical: false }), ['stops{"reason":"slice-culprit"}+1']);
  assert.deepEqual(steps('subtree-stopped', { slice: 'sessions.slice', critical: true }), ['stops{"reason":"machine-short"}+1']);
  for (const t of ['brake-raised', 'slice-brake-raised', 'brake-lowered', 'subtree-stopped', 'procs-reaped']) {
    assert.deepEqual(steps(t, { procs: [{ outcome: 'terminated' }] }, true), [], `${t} in observe-only: not done, not counted`);
  }
  assert.deepEqual(steps('standing-still', {}, true), ['verdicts{"verdict":"standing-still"}+1'], 'a verdict counts in observe-only too');
});

test('what is told but not done counts as no action: will-stop (the stop is counted when done), no-room, nothing-to-stop, leftovers', () => {
  for (const t of ['will-stop', 'no-room', 'nothing-to-stop', 'leftovers', 'feed-fallback', 'deadline-dropped', 'recovered', 'stop-finished']) assert.deepEqual(steps(t), [], t);
});

test('leftovers reaped: the processes ended by SIGTERM or SIGKILL', () => {
  const procs = [{ outcome: 'terminated' }, { outcome: 'killed' }, { outcome: 'survived' }, { outcome: 'skipped' }, { outcome: 'terminated' }];
  assert.deepEqual(steps('procs-reaped', { procs }), ['leftoversReaped{}+3']);
  assert.deepEqual(steps('procs-reaped', { procs: [{ outcome: 'skipped' }] }), [], 'none ended by sbd: nothing');
  assert.deepEqual(steps('procs-reaped', {}), [], 'no rows: nothing');
});

test('freeze incidents by kind, a reminder not counted again; kernel OOM kills by their count, in observe-only too', () => {
  for (const k of ['pegged', 'missing', 'silent']) {
    assert.deepEqual(steps(k), [`freezeIncidents{"kind":"${k}"}+1`]);
    assert.deepEqual(steps(k, { reminder: true }), [], `${k} reminder`);
  }
  assert.deepEqual(steps('oom-kill', { count: 3 }), ['oomKills{}+3']);
  assert.deepEqual(steps('oom-kill', { count: 2 }, true), ['oomKills{}+2'], 'the kernel killed: observed, whatever the mode');
  assert.deepEqual(steps('oom-kill', {}), ['oomKills{}+1'], 'no count told: one');
});

test('stopReason reads the figures the controller tells with a stop', () => {
  assert.equal(stopReason(incident('subtree-stopped', { share: 0.5, anonShare: 1, evidence: [] })), 'own-brake');
  assert.equal(stopReason(incident('subtree-stopped', { slice: 's.slice', cause: 'slice-brake', critical: false })), 'slice-culprit');
  assert.equal(stopReason(incident('subtree-stopped', { slice: 's.slice', cause: 'machine', critical: true })), 'machine-short');
});
