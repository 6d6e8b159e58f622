// @ts-check
'use strict';
// Signals told before sbd's interface is exported (the adoption's: a restored freeze signal's
// recovery) wait for it and go in order at READY; after it each goes at once; beyond the bound
// the oldest are dropped and counted.
const test = require('node:test');
const assert = require('node:assert/strict');
const { EarlySignals, EARLY_SIGNALS_KEPT } = require('../../../dist/daemon/early-signals.js');

/** A BusService that records what it was asked to send. */
function recorder(failOn = '') {
  const sent = [];
  return {
    sent,
    emitIncident: (i) => {
      if (i.type === failOn) throw new Error(`cannot send ${i.type}`);
      sent.push(['Incident', i.type]);
    },
    emitNotice: (session, entry) => sent.push(['Notice', session, entry.id]),
  };
}

const incident = (type) => /** @type {any} */ ({ type, unit: 'a.scope', session: 'a', atMs: 0, message: type });

test('told before READY: nothing sent; at attach all of them, in the order told; after it at once', () => {
  const signals = new EarlySignals();
  signals.emitIncident(incident('recovered'));
  signals.emitNotice('a', /** @type {any} */ ({ id: 7 }));
  signals.emitIncident(incident('missing'));
  const bus = recorder();
  assert.deepEqual(bus.sent, []);
  assert.equal(signals.attach(bus, assert.fail), 3);
  assert.deepEqual(bus.sent, [['Incident', 'recovered'], ['Notice', 'a', 7], ['Incident', 'missing']]);
  signals.emitIncident(incident('pegged'));
  assert.deepEqual(bus.sent.at(-1), ['Incident', 'pegged'], 'attached: sent at once');
});

test('a signal that cannot be sent at attach is reported and the rest still go; after attach the caller gets the error', () => {
  const signals = new EarlySignals();
  signals.emitIncident(incident('bad'));
  signals.emitIncident(incident('recovered'));
  const errors = [];
  const bus = recorder('bad');
  assert.equal(signals.attach(bus, (err) => errors.push(/** @type {Error} */ (err).message)), 1);
  assert.deepEqual(errors, ['cannot send bad']);
  assert.deepEqual(bus.sent, [['Incident', 'recovered']]);
  assert.throws(() => signals.emitIncident(incident('bad')), /cannot send bad/);
});

test('beyond the bound the oldest are dropped and counted', () => {
  const signals = new EarlySignals(2);
  for (const type of ['one', 'two', 'three']) signals.emitIncident(incident(type));
  const bus = recorder();
  assert.equal(signals.attach(bus, assert.fail), 2);
  assert.equal(signals.dropped, 1);
  assert.deepEqual(bus.sent, [['Incident', 'two'], ['Incident', 'three']]);
  assert.equal(EARLY_SIGNALS_KEPT, 10_000);
});
