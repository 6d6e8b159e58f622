// @ts-check
'use strict';
// Issue 13: sbctl monitor poll and ssh say in --help how a tick runs, backs off and is
// suspended, and take --interval, --timeout, --max-failures and --json; a bad count is refused
// before anything is asked of sbd.
const test = require('node:test');
const assert = require('node:assert/strict');
const path = require('node:path');
const { spawnSync } = require('node:child_process');

const SBCTL = path.join(__dirname, '../../../dist/cli/main.js');
const sbctl = (...args) => spawnSync(process.execPath, [SBCTL, ...args], { encoding: 'utf8', env: { ...process.env, DBUS_SESSION_BUS_ADDRESS: 'unix:path=/nonexistent/bus' } });

for (const cmd of ['poll', 'ssh']) {
  test(`sbctl monitor ${cmd} --help: its options and how it runs`, () => {
    const r = sbctl('monitor', cmd, '--help');
    assert.equal(r.status, 0, r.stderr);
    for (const opt of ['--interval <seconds>', '--timeout <seconds>', '--max-failures <n>', '--notify-on <regex...>', '--json']) assert.ok(r.stdout.includes(opt), `${cmd} --help lists ${opt}`);
    assert.match(r.stdout, /transient systemd timer/);
    assert.match(r.stdout, /backoff with jitter/);
    assert.match(r.stdout, /suspend the monitor/);
    assert.match(r.stdout, /Example:\n  sbctl monitor /);
  });
}

test('sbctl monitor ssh takes the host, then the remote words after --', () => {
  const r = sbctl('monitor', 'ssh', '--help');
  assert.match(r.stdout, /^Usage: sbctl monitor ssh \[options\] <host> <cmd\.\.\.>/);
  assert.match(r.stdout, /ssh's own failure .* exits 255/);
});

test('a bad --max-failures is refused before sbd is asked', () => {
  const r = sbctl('monitor', 'poll', '--interval', '5s', '--max-failures', '0', '--', 'true');
  assert.notEqual(r.status, 0);
  assert.match(r.stderr, /--max-failures <n>' argument '0' is invalid. expected a whole number, 1 or more/);
});
