// @ts-check
'use strict';
// Issue 4 in the guest, as tester: sbd installed and run as a user unit, sessions made with
// sbctl run, status with and without sbd, restarts, bad config and bad arguments.
const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { spawn, spawnSync } = require('node:child_process');
const { labOnly, waitFor, readCgroupFile } = require('./helpers');

const root = path.resolve(__dirname, '../../..');
const SBCTL = path.join(root, 'dist/cli/main.js');
const SBD = path.join(root, 'dist/daemon/main.js');

/** Run sbctl to completion: { status, stdout, stderr }. */
function sbctl(...args) {
  return spawnSync(process.execPath, [SBCTL, ...args], { encoding: 'utf8', timeout: 60_000 });
}
function systemctl(...args) {
  return spawnSync('systemctl', ['--user', ...args], { encoding: 'utf8' });
}
/** sbctl status --json, parsed, with its exit code. */
function statusJson() {
  const r = sbctl('status', '--json');
  assert.ok(r.status === 0 || r.status === 3, `sbctl status failed (${r.status}): ${r.stderr}`);
  return { code: r.status, report: JSON.parse(r.stdout) };
}
function sbdPid() {
  return Number(systemctl('show', '-P', 'MainPID', 'sbd.service').stdout.trim());
}

/** @type {import('node:child_process').ChildProcess[]} */
const running = [];
/** What each background `sbctl run` said on stderr, and how it ended (for a failure's message). */
const runLogs = new Map();
/** Start `sbctl run` in the background (it lives as long as its command). */
function startSession(name, ...cmd) {
  // No pipes: a session outliving the test must not hold the test's pipes open. stderr goes to
  // a file instead, so that a session that never shows up can say why.
  const errFile = path.join(os.tmpdir(), `sbctl-run-${name}-${process.pid}.err`);
  const fd = fs.openSync(errFile, 'w');
  const child = spawn(process.execPath, [SBCTL, 'run', '--name', name, '--memory-high', '64M', '--memory-max', '256M', '--swap-max', '0', '--', ...cmd], { stdio: ['ignore', 'ignore', fd] });
  fs.closeSync(fd);
  const log = { errFile, ended: 'running' };
  child.on('exit', (code, signal) => { log.ended = `exited ${code ?? signal}`; });
  runLogs.set(name, log);
  running.push(child);
  return child;
}

/** "s1: running; stderr: ..." for each session started so far. */
function describeRuns() {
  return [...runLogs].map(([name, l]) => `${name}: ${l.ended}; stderr: ${fs.readFileSync(l.errFile, 'utf8').trim() || '(empty)'}`).join('\n');
}

test('sbd and sbctl as a user runs them', labOnly, async (t) => {
  t.after(() => {
    systemctl('stop', 's1.scope', 's2.scope', 's3.scope');
    for (const c of running) c.kill('SIGKILL');
    sbctl('uninstall');
  });

  await t.test('sbctl install --now installs, enables and starts sbd', () => {
    const r = sbctl('install', '--now');
    assert.equal(r.status, 0, r.stderr);
    assert.match(r.stdout, /started sbd\.service/);
    assert.equal(systemctl('is-active', 'sbd.service').stdout.trim(), 'active');
    assert.equal(systemctl('is-enabled', 'sbd.service').stdout.trim(), 'enabled');
    const { code, report } = statusJson();
    assert.equal(code, 0);
    assert.equal(report.service.running, true);
    assert.equal(report.service.pid, sbdPid());
  });

  await t.test('sbctl doctor passes every check in the guest (sbctl and sbd on PATH); without them on PATH it says the fix', () => {
    // sbctl and sbd by name, as `npm start` or a packed install leaves them (here: tiny wrappers)
    const bin = fs.mkdtempSync(path.join(os.tmpdir(), 'sb-bin-'));
    for (const [n, file] of [['sbctl', SBCTL], ['sbd', SBD]]) fs.writeFileSync(path.join(bin, n), `#!/bin/sh\nexec ${process.execPath} ${file} "$@"\n`, { mode: 0o755 });
    const env = { ...process.env, PATH: `${bin}:${process.env.PATH}` };
    const r = spawnSync(process.execPath, [SBCTL, 'doctor'], { encoding: 'utf8', timeout: 60_000, env });
    assert.equal(r.status, 0, r.stdout);
    assert.doesNotMatch(r.stdout, /FAIL/);
    assert.match(r.stdout, /OK\s+PSI triggers/);
    assert.match(r.stdout, new RegExp(`OK\\s+on PATH\\s+sbctl is ${bin}/sbctl, sbd is ${bin}/sbd`));
    // sbd's own /proc, read by the same user: its fds against its limit, its inotify watches
    assert.match(r.stdout, /OK\s+open files\s+sbd \(pid \d+\) holds \d+ of \d+ open files/);
    assert.match(r.stdout, /OK\s+inotify watches\s+sbd holds \d+ of the \d+ inotify watches/);
    const bare = spawnSync(process.execPath, [SBCTL, 'doctor'], { encoding: 'utf8', timeout: 60_000, env: { ...process.env, PATH: '/usr/bin:/bin' } });
    assert.equal(bare.status, 1, bare.stdout);
    assert.match(bare.stdout, /FAIL\s+on PATH\s+sbctl and sbd not found on PATH\n\s+fix: run `npm start`/);
    fs.rmSync(bin, { recursive: true, force: true });
  });

  await t.test('three sessions made by sbctl run show in status with the values of their cgroup files', async () => {
    const started = Date.now();
    for (const n of ['s1', 's2', 's3']) startSession(n, 'sleep', '600');
    // each poll is a node start (sbctl status): under a busy TCG host 30 s was too short (trixie run)
    const report = await waitFor(() => {
      const r = statusJson().report;
      // (for a moment after its scope is made, a session's process is still the exec gate)
      return ['s1', 's2', 's3'].every((n) => r.sessions.some((s) => s.name === n && s.biggest?.name === 'sleep')) && r;
    }, 90_000, { what: 'three sessions running sleep in sbctl status' }).catch((err) => {
      throw new Error(`${err.message}\nin status: ${statusJson().report.sessions.map((s) => `${s.name} (${s.biggest?.name ?? '-'})`).join(', ')}\n${describeRuns()}`);
    });
    t.diagnostic(`three sessions listed ${Date.now() - started} ms after sbctl run (includes node start-up under TCG)`);
    for (const n of ['s1', 's2', 's3']) {
      const row = report.sessions.find((s) => s.name === n);
      const dir = `/sys/fs/cgroup/user.slice/user-1000.slice/user@1000.service/sessions.slice/${n}.scope`;
      assert.equal(row.unit, `${n}.scope`);
      assert.equal(row.state, 'ok');
      assert.equal(row.highBytes, Number(readCgroupFile(dir, 'memory.high')));
      assert.equal(row.highBytes, 64 * 2 ** 20);
      assert.equal(row.maxBytes, 256 * 2 ** 20);
      assert.equal(row.swapMaxBytes, 0);
      assert.equal(row.processes, readCgroupFile(dir, 'cgroup.procs').split('\n').length);
      assert.equal(row.biggest.name, 'sleep');
      // sbd's last reading (issue 15): never older than its stale limit (30 s)
      assert.ok(typeof row.sampleAgeS === 'number' && row.sampleAgeS >= 0 && row.sampleAgeS <= 30, `sampleAgeS ${row.sampleAgeS}`);
    }
  });

  await t.test('the command runs inside its scope with SESSIONBRAKE_SESSION set', () => {
    const dir = '/sys/fs/cgroup/user.slice/user-1000.slice/user@1000.service/sessions.slice/s1.scope';
    const pid = readCgroupFile(dir, 'cgroup.procs').split('\n')[0];
    assert.equal(fs.readFileSync(`/proc/${pid}/comm`, 'utf8').trim(), 'sleep');
    const env = fs.readFileSync(`/proc/${pid}/environ`, 'utf8').split('\0');
    assert.ok(env.includes('SESSIONBRAKE_SESSION=s1'), 'marker in the environment');
  });

  await t.test('sbctl run exits with the command\'s exit code', () => {
    const r = sbctl('run', '--name', 'exit7', '--', 'python3', '-c', 'import sys; sys.exit(7)');
    assert.equal(r.status, 7, r.stderr);
    const missing = sbctl('run', '--name', 'nocmd', '--', 'no-such-command-here');
    assert.equal(missing.status, 127);
    assert.match(missing.stderr, /cannot run no-such-command-here: No such file or directory/);
  });

  await t.test('bad arguments and a taken name give exit code 2 and name the fault', () => {
    const badSize = sbctl('run', '--memory-high', '64Q', '--', 'true');
    assert.equal(badSize.status, 2);
    assert.match(badSize.stderr, /option '--memory-high <size>' argument '64Q' is invalid/);
    const taken = sbctl('run', '--name', 's1', '--', 'true');
    assert.equal(taken.status, 2);
    assert.match(taken.stderr, /a session named "s1" exists already \(s1\.scope, active\)/);
    const badName = sbctl('run', '--name', 'has space', '--', 'true');
    assert.equal(badName.status, 2);
    assert.match(badName.stderr, /is not usable as a unit name/);
    const unknown = sbctl('frobnicate');
    assert.equal(unknown.status, 2);
  });

  await t.test('a session that ends leaves status', async () => {
    const dir = '/sys/fs/cgroup/user.slice/user-1000.slice/user@1000.service/sessions.slice/s3.scope';
    const pid = Number(readCgroupFile(dir, 'cgroup.procs').split('\n')[0]);
    process.kill(pid, 'SIGTERM');
    await waitFor(() => !statusJson().report.sessions.some((s) => s.name === 's3'), 20_000, { what: 's3 to leave status' });
  });

  await t.test('systemctl --user restart sbd re-adopts the running sessions', async () => {
    const before = sbdPid();
    assert.equal(systemctl('restart', 'sbd.service').status, 0);
    const after = sbdPid();
    assert.notEqual(after, before);
    const { report } = statusJson();
    assert.equal(report.service.pid, after);
    assert.deepEqual(report.sessions.map((s) => s.name).filter((n) => n === 's1' || n === 's2'), ['s1', 's2']);
  });

  await t.test('kill -9 of sbd is followed by systemd\'s restart', async () => {
    const before = sbdPid();
    process.kill(before, 'SIGKILL');
    const after = await waitFor(() => {
      const pid = sbdPid();
      return pid !== 0 && pid !== before && systemctl('is-active', 'sbd.service').stdout.trim() === 'active' && pid;
    }, 90_000, { what: 'sbd to be restarted' });   // RestartSec + node start-up: 31 s under a busy TCG host
    assert.equal(statusJson().report.service.pid, after);
  });

  await t.test('a bad config stops sbd with exit code 2 and a message naming the fault', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sb-config-'));
    const file = path.join(dir, 'config.json');
    fs.writeFileSync(file, JSON.stringify({ detector: { tripShare: 'high' } }));
    // (a guard, not a timing: node's start under emulation beside another guest took over 30 s)
    const r = spawnSync(process.execPath, [SBD, '--config', file], { encoding: 'utf8', timeout: 120_000 });
    assert.equal(r.status, 2);
    assert.match(r.stderr, new RegExp(`${file}: key "detector.tripShare": expected a number; found "high"`));
    const bad = spawnSync(process.execPath, [SBD, '--no-such-flag'], { encoding: 'utf8', timeout: 120_000 });
    assert.equal(bad.status, 2);
  });

  await t.test('sbctl status with sbd stopped exits 3 and still lists the sessions', () => {
    assert.equal(systemctl('stop', 'sbd.service').status, 0);
    const { code, report } = statusJson();
    assert.equal(code, 3);
    assert.equal(report.service.running, false);
    assert.ok(report.sessions.some((s) => s.name === 's1' && s.state === 'unwatched'));
    const human = sbctl('status');
    assert.equal(human.status, 3);
    assert.match(human.stdout, /^sbd: not running/);
    assert.match(human.stdout, /^s1\s+unwatched\s+/m);
    assert.equal(sbctl('status', 'no-such-session').status, 4);
  });
});
