'use strict';
// The watchdog pings: sent at half systemd's interval, and a ping that came late told (a turn of
// the event loop held that long), so that a kill by the watchdog has a warning before it.
const test = require('node:test');
const assert = require('node:assert/strict');
const { pingLateMs, startWatchdog } = require('../../../dist/daemon/notify.js');

test('pingLateMs: on time or a little late says nothing; more than a quarter of the interval late says how late', () => {
  assert.equal(pingLateMs(15_000, 15_000, 30_000), undefined);
  assert.equal(pingLateMs(22_500, 15_000, 30_000), undefined, 'exactly a quarter late is not told');
  assert.equal(pingLateMs(22_600, 15_000, 30_000), 7_600);
  assert.equal(pingLateMs(40_000, 15_000, 30_000), 25_000);
});

test('startWatchdog: no WATCHDOG_USEC (or another pid\'s), no timer and nothing told', (t) => {
  t.mock.timers.enable({ apis: ['setInterval'] });
  const told = [];
  startWatchdog({}, 42, (late) => told.push(late))();
  startWatchdog({ WATCHDOG_USEC: '30000000', WATCHDOG_PID: '7' }, 42, (late) => told.push(late))();
  t.mock.timers.tick(120_000);
  assert.deepEqual(told, []);
});

test('startWatchdog: a ping whose turn came 12 s late is told with its lateness, the next on-time one is not', (t) => {
  t.mock.timers.enable({ apis: ['setInterval'] });
  let now = 1_000;
  const told = [];
  const stop = startWatchdog({ WATCHDOG_USEC: '30000000' }, process.pid, (late, interval) => told.push([late, interval]), () => now);
  now += 15_000;
  t.mock.timers.tick(15_000); // on time
  now += 27_000; // the loop was held: this turn ran 12 s after it was due
  t.mock.timers.tick(15_000);
  now += 15_000;
  t.mock.timers.tick(15_000);
  stop();
  now += 60_000;
  t.mock.timers.tick(60_000);
  assert.deepEqual(told, [[12_000, 30_000]]);
});
