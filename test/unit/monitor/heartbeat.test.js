// @ts-check
'use strict';
// Issue 13: heartbeatMinutes (pure): due a period after the last notice; what it says.
const test = require('node:test');
const assert = require('node:assert/strict');
const { heartbeatDue, heartbeatDueMs, heartbeatText } = require('../../../dist/monitor/heartbeat.js');
const { MAX_LINE_CHARS } = require('../../../dist/monitor/notices.js');

test('due a period after the last notice, not before', () => {
  assert.equal(heartbeatDueMs({ lastToldMonoMs: 1000 }, 60_000), 61_000);
  assert.equal(heartbeatDue({ lastToldMonoMs: 1000 }, 60_000, 60_999), false);
  assert.equal(heartbeatDue({ lastToldMonoMs: 1000 }, 60_000, 61_000), true);
});

test('what it says: ticks, failures in a row, the last line (cut)', () => {
  assert.equal(heartbeatText({ ticks: 0, consecutiveFailures: 0 }), 'alive: 0 ticks; no output line seen yet');
  assert.equal(heartbeatText({ ticks: 1, consecutiveFailures: 2, lastLine: 'GET /health 200' }), 'alive: 1 tick, 2 failures in a row; last line: "GET /health 200"');
  const long = heartbeatText({ ticks: 3, consecutiveFailures: 0, lastLine: 'x'.repeat(MAX_LINE_CHARS + 100) });
  assert.ok(long.length < MAX_LINE_CHARS + 60 && long.endsWith('…"'), long.slice(-20));
});
