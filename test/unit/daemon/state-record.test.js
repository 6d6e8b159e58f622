// @ts-check
'use strict';
// A session's entry in the state file, saved in two parts: the controller's and the freeze watch's.
const test = require('node:test');
const assert = require('node:assert/strict');
const { StateRecords } = require('../../../dist/daemon/state-record.js');

function records(loaded = {}) {
  const written = [];
  const state = {};
  const r = new StateRecords(loaded, (unit, s, options) => {
    written.push([unit, s, options?.batched ?? false]);
    if (s === undefined) delete state[unit];
    else state[unit] = s;
  }, () => 'boot-1');
  return { r, written, state };
}

const deadline = { startedAtMs: 1, endsAtMs: 2, currentAtStart: 3 };

test("each part saved keeps the other's: the freeze watch's open signals beside the controller's deadline", () => {
  const { r, state } = records();
  r.saveFreeze('a.scope', 'inv-a', { open: ['missing'] });
  assert.deepEqual(state['a.scope'], { invocationId: 'inv-a', bootId: 'boot-1', freeze: { open: ['missing'] } }, 'the freeze part alone names the boot its times are on');
  r.saveActions('a.scope', { invocationId: 'inv-a', bootId: 'boot-1', deadline });
  assert.deepEqual(state['a.scope'], { invocationId: 'inv-a', bootId: 'boot-1', deadline, freeze: { open: ['missing'] } });
  r.saveActions('a.scope', undefined); // the deadline ended
  assert.deepEqual(state['a.scope'], { invocationId: 'inv-a', bootId: 'boot-1', freeze: { open: ['missing'] } }, 'the open signal is kept');
  r.saveFreeze('a.scope', 'inv-a', undefined); // recovered
  assert.equal(state['a.scope'], undefined, 'nothing left: the entry goes');
});

test('a loaded entry keeps the part its owner has not saved again; drop removes all of it', () => {
  const { r, state } = records({ 'a.scope': { invocationId: 'inv-a', bootId: 'boot-0', deadline, freeze: { open: ['silent'] } } });
  r.saveFreeze('a.scope', 'inv-a', { open: ['silent', 'pegged'], busySinceMs: 5 });
  assert.deepEqual(state['a.scope'], { invocationId: 'inv-a', bootId: 'boot-0', deadline, freeze: { open: ['silent', 'pegged'], busySinceMs: 5 } });
  r.drop('a.scope');
  assert.equal(state['a.scope'], undefined);
  r.saveActions('a.scope', undefined);
  assert.equal(state['a.scope'], undefined, 'nothing comes back after a drop');
});

test('a new invocation of the unit: the controller part of the old one is not merged into the freeze part of the new, and the old freeze part goes', () => {
  const old = records({ 'a.scope': { invocationId: 'inv-old', deadline } });
  old.r.saveFreeze('a.scope', 'inv-new', { open: ['missing'] });
  assert.deepEqual(old.state['a.scope'], { invocationId: 'inv-new', bootId: 'boot-1', freeze: { open: ['missing'] } });
  old.r.saveFreeze('a.scope', 'inv-new', undefined);
  assert.equal(old.state['a.scope'], undefined, "the old invocation's deadline does not come back");
  const stale = records({ 'a.scope': { invocationId: 'inv-old', freeze: { open: ['missing'] } } });
  stale.r.saveActions('a.scope', { invocationId: 'inv-new', deadline });
  assert.deepEqual(stale.state['a.scope'], { invocationId: 'inv-new', deadline });
});

test("the freeze watch's saves are batched (the watch flushes once a round, before telling); the controller's are not", () => {
  const { r, written } = records();
  r.saveFreeze('a.scope', 'inv-a', { open: ['missing'] });
  r.saveActions('b.scope', { invocationId: 'inv-b', deadline });
  assert.deepEqual(written.map(([unit, , batched]) => [unit, batched]), [['a.scope', true], ['b.scope', false]]);
});
