// @ts-check
'use strict';
// The per-key throttle of the OOM watch's reads (issue 15, item 5): a burst of changes is read at
// once, then at most once per period, and its last change is always read.
const test = require('node:test');
const assert = require('node:assert/strict');
const { KeyedThrottle } = require('../../../dist/util/keyed-throttle.js');

test('a burst: the first at once, the rest as one trailing run with the latest task; keys apart', (t) => {
  t.mock.timers.enable({ apis: ['setTimeout', 'Date'] });
  const ran = [];
  const th = new KeyedThrottle(500, () => Date.now());
  for (let i = 0; i < 10; i++) {
    th.run('a', () => ran.push(`a${i}`));
    t.mock.timers.tick(10);
  }
  th.run('b', () => ran.push('b0'));
  assert.deepEqual(ran, ['a0', 'b0'], 'a first call runs at once, per key');
  t.mock.timers.tick(500 - 100);
  assert.deepEqual(ran, ['a0', 'b0', 'a9'], 'one trailing run, 500 ms after the first, with the last task');
  t.mock.timers.tick(1000);
  assert.deepEqual(ran, ['a0', 'b0', 'a9'], 'nothing more without a call');
  th.run('a', () => ran.push('a10'));
  assert.deepEqual(ran.at(-1), 'a10', 'a call after a quiet period runs at once');
});

test('forget: no trailing run for a key that is gone', (t) => {
  t.mock.timers.enable({ apis: ['setTimeout', 'Date'] });
  const ran = [];
  const th = new KeyedThrottle(500, () => Date.now());
  th.run('a', () => ran.push(1));
  th.run('a', () => ran.push(2));
  th.forget('a');
  t.mock.timers.tick(1000);
  assert.deepEqual(ran, [1]);
  th.run('a', () => ran.push(3));
  assert.deepEqual(ran, [1, 3], 'forgotten: the next call runs at once');
});

test('flush: a waiting trailing run now (the key is going), then nothing kept', (t) => {
  t.mock.timers.enable({ apis: ['setTimeout', 'Date'] });
  const ran = [];
  const th = new KeyedThrottle(500, () => Date.now());
  th.run('a', () => ran.push(1));
  th.run('a', () => ran.push(2)); // the OOM killer's change, say, in the throttled half second
  th.flush('a');
  assert.deepEqual(ran, [1, 2], 'the last change is read before the session is forgotten');
  t.mock.timers.tick(1000);
  assert.deepEqual(ran, [1, 2], 'no second run from the timer');
  th.flush('b');
  assert.deepEqual(ran, [1, 2], 'nothing waiting: nothing run');
});
