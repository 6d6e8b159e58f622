// @ts-check
'use strict';
// One duration formatter for every table sbctl prints (issue 12, fault 9: reap and status had
// their own, so the same 125 s read "2m" in one and "2m 5s" in the other).
const test = require('node:test');
const assert = require('node:assert/strict');
const { formatDuration } = require('../../../dist/util/duration.js');
const { formatReap } = require('../../../dist/cli/reap.js');

test('seconds, minutes, hours, days', () => {
  assert.equal(formatDuration(45.4), '45s');
  assert.equal(formatDuration(125), '2m 5s');
  assert.equal(formatDuration(3 * 3600 + 600), '3h 10m');
  assert.equal(formatDuration(2 * 86400 + 4 * 3600), '2d 4h');
});

test('reap\'s table writes CPU and age as status does', () => {
  const out = formatReap([{ pid: 7, program: 'vite', cpuS: 125, ageS: 3 * 3600 + 600, rssBytes: 2 ** 20, outcome: 'terminated' }]);
  assert.match(out.split('\n')[1] ?? '', /^7 +vite +2m 5s +3h 10m /);
});
