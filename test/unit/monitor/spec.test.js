// @ts-check
'use strict';
// Issue 13: a monitor's request is checked before anything runs; each problem is named by its key.
const test = require('node:test');
const assert = require('node:assert/strict');
const { parseMonitorSpec, MonitorSpecError, MAX_LINES_CAP } = require('../../../dist/monitor/spec.js');

test('a poll: argv, interval, and a timeout that defaults to half the interval', () => {
  const m = parseMonitorSpec({ type: 'poll', argv: ['curl', '-fsS', 'http://localhost:3000/health'], intervalS: 30 });
  assert.equal(m.type, 'poll');
  assert.equal(m.timeoutS, 15);
  assert.equal(m.reuse, 'return-existing');
  assert.equal(m.maxLines, 10);
  assert.equal(m.maxConsecutiveFailures, 5);
});

test('ticks never overlap: a timeout not shorter than the interval is refused, naming timeoutS', () => {
  assert.throws(() => parseMonitorSpec({ type: 'poll', argv: ['true'], intervalS: 10, timeoutS: 10 }), /timeoutS: timeoutS must be shorter than intervalS/);
  assert.throws(() => parseMonitorSpec({ type: 'http', url: 'http://127.0.0.1:8080/', intervalS: 10, timeoutS: 12 }), /timeoutS/);
});

test('a shell string is not an argv', () => {
  assert.throws(() => parseMonitorSpec({ type: 'poll', argv: 'curl -fsS http://x', intervalS: 30 }), (e) => e instanceof MonitorSpecError && /argv: /.test(e.message));
  assert.throws(() => parseMonitorSpec({ type: 'spawn', argv: [] }), /argv: an argv: the program and its arguments/);
});

test('an unknown or missing type names the types there are', () => {
  assert.throws(() => parseMonitorSpec({ type: 'cron', argv: ['x'] }), /type: one of spawn, poll, tail, file, process, ssh, http \(got "cron"\)/);
  assert.throws(() => parseMonitorSpec({}), /got nothing/);
});

test('keys a type does not take are refused (a typo is not silently ignored)', () => {
  assert.throws(() => parseMonitorSpec({ type: 'tail', path: '/var/log/x.log', notifyon: ['ERROR'] }), /notifyon/);
});

test('a notifyOn regex that does not compile is refused before it runs', () => {
  assert.throws(() => parseMonitorSpec({ type: 'tail', path: '/tmp/x.log', notifyOn: ['(unclosed'] }), /notifyOn\.0: a regular expression that compiles/);
});

test('bounds: maxLines capped, polls not faster than 5 s, paths absolute, expiresAt with a zone', () => {
  assert.throws(() => parseMonitorSpec({ type: 'tail', path: '/tmp/x', maxLines: MAX_LINES_CAP + 1 }), /maxLines/);
  assert.throws(() => parseMonitorSpec({ type: 'poll', argv: ['true'], intervalS: 1 }), /intervalS/);
  assert.throws(() => parseMonitorSpec({ type: 'file', path: 'relative/x' }), /path: an absolute path/);
  assert.throws(() => parseMonitorSpec({ type: 'tail', path: '/tmp/x', expiresAt: '2026-12-01 06:00' }), /expiresAt/);
  assert.equal(parseMonitorSpec({ type: 'tail', path: '/tmp/x', expiresAt: '2026-12-01T06:00:00Z' }).expiresAt, '2026-12-01T06:00:00Z');
});

test('process: by pid file or by match', () => {
  assert.equal(parseMonitorSpec({ type: 'process', pidFile: '/run/user/1000/dev.pid' }).pidFile, '/run/user/1000/dev.pid');
  assert.equal(parseMonitorSpec({ type: 'process', match: 'vite' }).match, 'vite');
  assert.throws(() => parseMonitorSpec({ type: 'process' }), /match/);
});

test('ssh: a host without options, an argv run there', () => {
  assert.equal(parseMonitorSpec({ type: 'ssh', host: 'ci@build1', argv: ['tail', '-n', '5', '/var/log/train.log'], intervalS: 60 }).timeoutS, 30);
  assert.throws(() => parseMonitorSpec({ type: 'ssh', host: '-oVisualHostKey', argv: ['true'], intervalS: 60 }), /host: a host as ssh takes it/, 'an option is not a host');
  assert.throws(() => parseMonitorSpec({ type: 'ssh', host: '-oProxyCommand=sh', argv: ['true'], intervalS: 60 }), /host: a host as ssh takes it/);
});
