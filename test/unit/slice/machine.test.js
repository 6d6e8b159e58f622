// @ts-check
'use strict';
// The machine as the outermost slice: its level from MemAvailable, and when to read it again
// (the time RAM would take to fill to the critical line at the fastest rate, within bounds).
const test = require('node:test');
const assert = require('node:assert/strict');
const { machineLevel, nextCheckMs, MIN_CHECK_MS, MAX_CHECK_MS, FASTEST_FILL_BYTES_PER_S } = require('../../../dist/slice/machine-watch.js');
const { parseMeminfo } = require('../../../dist/proc/meminfo.js');

const MiB = 2 ** 20;
const GiB = 2 ** 30;
const lines = { reserveBytes: 1 * GiB, criticalAvailableShare: 0.05 };

test('levels: ok, short under the reserve, critical under 5 % of MemTotal', () => {
  assert.equal(machineLevel(4 * GiB, 16 * GiB, lines), 'ok');
  assert.equal(machineLevel(900 * MiB, 16 * GiB, lines), 'short');
  assert.equal(machineLevel(800 * MiB, 16 * GiB, lines), 'critical');
});

test('next reading: sooner the closer to the critical line, within 100 ms and 15 s', () => {
  assert.equal(nextCheckMs(200 * GiB, 256 * GiB, lines), MAX_CHECK_MS, 'much room: the watchdog period');
  const gap = 3 * GiB;
  assert.equal(nextCheckMs(gap + 0.05 * 16 * GiB, 16 * GiB, lines), (gap / FASTEST_FILL_BYTES_PER_S) * 1000);
  assert.equal(nextCheckMs(700 * MiB, 16 * GiB, lines), MIN_CHECK_MS, 'below the line: as often as allowed');
});

test('meminfo: MemAvailable and MemTotal in bytes; a kernel without MemAvailable is named', () => {
  assert.deepEqual(parseMeminfo('MemTotal:        2012120 kB\nMemFree:  1 kB\nMemAvailable:    1830280 kB\n'), { availableBytes: 1830280 * 1024, totalBytes: 2012120 * 1024 });
  assert.throws(() => parseMeminfo('MemTotal: 1 kB\n'), /\/proc\/meminfo: unexpected content: no MemAvailable line/);
});
