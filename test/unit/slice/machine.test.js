// @ts-check
'use strict';
// The machine as the outermost slice: its level from MemAvailable, and when to read it again
// (the time RAM would take to fill to the critical line at the fastest rate, within bounds).
const test = require('node:test');
const assert = require('node:assert/strict');
const { machineLevel, nextCheckMs, fillRate, MIN_CHECK_MS, MAX_CHECK_MS, FASTEST_FILL_BYTES_PER_S, FILL_GROWTH_ALLOWANCE } = require('../../../dist/slice/machine-watch.js');
const { parseMeminfo } = require('../../../dist/proc/meminfo.js');

const MiB = 2 ** 20;
const GiB = 2 ** 30;
const lines = { reserveBytes: 1 * GiB, criticalAvailableShare: 0.05 };

test('levels: ok, short under the reserve, critical under 5 % of MemTotal', () => {
  assert.equal(machineLevel(4 * GiB, 16 * GiB, lines), 'ok');
  assert.equal(machineLevel(900 * MiB, 16 * GiB, lines), 'short');
  assert.equal(machineLevel(800 * MiB, 16 * GiB, lines), 'critical');
});

test('next reading under the reserve: the fastest fill to the critical line, within 100 ms and 15 s', () => {
  const big = { reserveBytes: 64 * GiB, criticalAvailableShare: 0.05 };
  assert.equal(nextCheckMs(200 * GiB, 256 * GiB, { ...big, reserveBytes: 210 * GiB }), MAX_CHECK_MS, 'much room to the line: the watchdog period');
  const gap = 3 * GiB;
  assert.equal(nextCheckMs(gap + 0.05 * 16 * GiB, 16 * GiB, { ...lines, reserveBytes: 8 * GiB }), (gap / FASTEST_FILL_BYTES_PER_S) * 1000);
  assert.equal(nextCheckMs(900 * MiB, 2 * GiB, lines, 0), ((900 * MiB - 0.05 * 2 * GiB) / FASTEST_FILL_BYTES_PER_S) * 1000, 'short: the fill seen does not slow it');
  assert.equal(nextCheckMs(700 * MiB, 16 * GiB, lines), MIN_CHECK_MS, 'below the line: as often as allowed');
});

test('next reading above the reserve: idle is 15 s whatever the machine size; a fill seen brings it closer', () => {
  // issue 15: a 2 GiB guest with 1.6 GiB available was read every 250 ms at the fastest-fill pace
  assert.equal(nextCheckMs(1.6 * GiB, 2 * GiB, lines, 0), MAX_CHECK_MS, 'nothing filling: four readings a minute');
  assert.equal(nextCheckMs(200 * GiB, 256 * GiB, lines, 0), MAX_CHECK_MS);
  const fill = 23 * MiB; // guest 38-machine's hog
  assert.ok(Math.abs(nextCheckMs(1.1 * GiB, 2 * GiB, lines, fill) - ((0.1 * GiB) / (FILL_GROWTH_ALLOWANCE * fill)) * 1000) < 1e-6, 'the room above the reserve at four times the fill seen');
  assert.equal(nextCheckMs(1.5 * GiB, 2 * GiB, lines, 1 * MiB), MAX_CHECK_MS, 'a slow fill far above: still at most 15 s');
  assert.equal(nextCheckMs(1 * GiB + MiB, 2 * GiB, lines, 6000 * MiB), MIN_CHECK_MS, 'a fast fill at the reserve: as often as allowed');
});

test('fill rate: MemAvailable falling, in bytes a second; rising or no earlier reading is 0', () => {
  assert.equal(fillRate({ availableBytes: 1000 * MiB, atMs: 0 }, { availableBytes: 900 * MiB, atMs: 2000 }), 50 * MiB);
  assert.equal(fillRate({ availableBytes: 900 * MiB, atMs: 0 }, { availableBytes: 1000 * MiB, atMs: 2000 }), 0, 'memory came back');
  assert.equal(fillRate(undefined, { availableBytes: 900 * MiB, atMs: 2000 }), 0);
  assert.equal(fillRate({ availableBytes: 1000 * MiB, atMs: 2000 }, { availableBytes: 900 * MiB, atMs: 2000 }), 0, 'no time between');
});

test('meminfo: MemAvailable and MemTotal in bytes; a kernel without MemAvailable is named', () => {
  assert.deepEqual(parseMeminfo('MemTotal:        2012120 kB\nMemFree:  1 kB\nMemAvailable:    1830280 kB\n'), { availableBytes: 1830280 * 1024, totalBytes: 2012120 * 1024 });
  assert.throws(() => parseMeminfo('MemTotal: 1 kB\n'), /\/proc\/meminfo: unexpected content: no MemAvailable line/);
});
