// @ts-check
'use strict';
// Issue 13, monitors on systemd's own primitives, against the real user manager: a spawn is a
// transient service of the session's slice carrying its marker, its matching output reaches the
// session's inbox, the same request is reused (or replaced: the first unit stopped), a crash loop is quarantined by systemd's start
// limit, a poll with work in it is quarantined, a tail tells appended lines, `stop` touches only
// the monitor's own unit, and the session's end ends its monitors.
const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { spawn, spawnSync } = require('node:child_process');
const { labOnly, waitFor } = require('./helpers');
const { startSbd, runSession, sbctl, systemctl, SLICE_DIR, alive } = require('./sbd-helpers');

const json = (r) => {
  assert.equal(r.status, 0, `sbctl: ${r.stderr}`);
  return JSON.parse(r.stdout);
};
const inbox = (session) => {
  const r = sbctl('inbox', '--session', session, '--json');
  assert.equal(r.status, 0, r.stderr);
  return r.stdout.trim().split('\n').filter(Boolean).map((l) => JSON.parse(l));
};
const show = (unit, prop) => systemctl('show', '-P', prop, unit).stdout.trim();

test('monitors: spawn, reuse, inbox, crash loop, quarantine, tail, stop, the session\'s end', labOnly, async (t) => {
  await startSbd({});
  const session = runSession('mon1', ['--memory-high', '256M'], ['sleep', '900']);
  t.after(() => { systemctl('stop', 'mon1.scope'); session.child.kill(); });
  await waitFor(() => json(sbctl('status', '--json')).sessions.some((s) => s.name === 'mon1'), 60_000, { what: 'sbd to watch mon1' });

  // a spawn: a transient service of the session's slice, with the session's marker
  const node = process.execPath;
  const start = () => json(sbctl('monitor', 'start', '--session', 'mon1', '--label', 'dev', '--notify-on', 'READY', '--coalesce', '1s', '--json', '--', node, '-e', "console.log('READY on 3000'); setInterval(() => {}, 1000)"));
  const dev = start();
  assert.equal(dev.answer, 'created');
  const unit = `sb-monitor-${dev.id}.service`;
  assert.equal(show(unit, 'ActiveState'), 'active');
  assert.equal(show(unit, 'Slice'), 'sessions.slice');
  assert.match(show(unit, 'Environment'), /SESSIONBRAKE_SESSION=mon1/);
  assert.equal(show(unit, 'KillMode'), 'control-group');
  assert.ok(fs.existsSync(path.join(SLICE_DIR, unit)), 'its cgroup is under the sessions slice');
  const ready = await waitFor(() => inbox('mon1').find((n) => n.kind === 'match' && n.lines?.some((l) => l.includes('READY on 3000'))), 30_000, { what: 'the READY line in the inbox' });
  assert.equal(ready.text, 'dev: 1 new line matched');
  assert.deepEqual(start(), { answer: 'reused', id: dev.id, handle: dev.handle }, 'the same request again: the same monitor');

  // a crash loop: systemd's start limit is the fuse; sbd quarantines and tells. A shell,
  // not node: the fuse is 3 starts in 60 s, and under a loaded emulator node alone can take 20 s
  // to start (CI, 2026-12-02), so its loop never reached three in a minute
  const crash = json(sbctl('monitor', 'start', '--session', 'mon1', '--label', 'crashy', '--json', '--', '/bin/sh', '-c', 'exit 3'));
  await waitFor(() => json(sbctl('monitor', 'list', '--session', 'mon1', '--json')).find((m) => m.id === crash.id && m.lifecycle === 'quarantined'), 90_000, { what: 'the crash-looping monitor to be quarantined' });
  // systemd 252 keeps Result=exit-code when the limit refuses an automatic restart: the restarts tell
  assert.equal(show(`sb-monitor-${crash.id}.service`, 'ActiveState'), 'failed');
  assert.ok(Number(show(`sb-monitor-${crash.id}.service`, 'NRestarts')) >= 3, 'systemd restarted it up to its start limit');
  assert.ok(inbox('mon1').some((n) => n.kind === 'quarantined' && /^crashy: it crashed again and again/.test(n.text)));

  // a poll with work in it never runs
  const poll = json(sbctl('monitor', 'poll', '--session', 'mon1', '--interval', '30s', '--json', '--', 'npm', 'install'));
  assert.equal(poll.answer, 'quarantined');
  assert.match(poll.reason, /"npm install" is work/);

  // a tail: appended lines that match
  const log = path.join(os.homedir(), 'mon1-build.log');
  fs.writeFileSync(log, 'ERROR from before the monitor\n');
  t.after(() => fs.rmSync(log, { force: true }));
  const tail = json(sbctl('monitor', 'tail', '--session', 'mon1', '--notify-on', 'ERROR', '--coalesce', '1s', '--json', log));
  assert.equal(tail.answer, 'created');
  fs.appendFileSync(log, 'compiling\nERROR: undefined reference to main\n');
  const told = await waitFor(() => inbox('mon1').find((n) => n.from === tail.handle), 30_000, { what: 'the tail\'s notice' });
  assert.deepEqual(told.lines, ['ERROR: undefined reference to main'], 'only the new matching line');

  // stop touches only the monitor's own unit: a process of the same user outside it lives on
  const bystander = spawn('sleep', ['600'], { stdio: 'ignore' });
  t.after(() => bystander.kill());
  assert.deepEqual(json(sbctl('monitor', 'stop', '--session', 'mon1', '--json', dev.handle)), { handle: dev.handle, lifecycle: 'stopped' });
  await waitFor(() => show(unit, 'ActiveState') !== 'active', 30_000, { what: `${unit} to stop` });
  assert.ok(bystander.pid !== undefined && alive(bystander.pid), 'a process outside the monitor survives');

  // the session's end ends its monitors; before that, --reuse replace: the first one's unit
  // is stopped, a new one runs in its place
  const late0 = json(sbctl('monitor', 'start', '--session', 'mon1', '--label', 'late', '--json', '--', node, '-e', 'setInterval(() => {}, 1000)'));
  const late = json(sbctl('monitor', 'start', '--session', 'mon1', '--label', 'late', '--reuse', 'replace', '--json', '--', node, '-e', 'setInterval(() => {}, 1000)'));
  assert.equal(late.answer, 'replaced');
  assert.notEqual(late.id, late0.id);
  await waitFor(() => show(`sb-monitor-${late0.id}.service`, 'ActiveState') !== 'active', 30_000, { what: 'the replaced monitor\'s unit to stop' });
  assert.equal(show(`sb-monitor-${late.id}.service`, 'ActiveState'), 'active');
  systemctl('stop', 'mon1.scope');
  await waitFor(() => show(`sb-monitor-${late.id}.service`, 'ActiveState') !== 'active', 60_000, { what: 'the session\'s monitor to end with it' });
  const after = json(sbctl('monitor', 'list', '--all', '--json')).find((m) => m.id === late.id);
  assert.equal(after?.lifecycle, 'stopped');
  assert.equal(after?.reason, 'its session ended');
});

test('a slow crash loop, each run too long for systemd\'s 3 starts in 60 s, is quarantined by sbd after 4 crashes: told, its unit stopped; found running by the next sbd, stopped; approved, a fresh unit', labOnly, async (t) => {
  await startSbd({});
  const session = runSession('mon2', ['--memory-high', '256M'], ['sleep', '900']);
  t.after(() => { systemctl('stop', 'mon2.scope'); session.child.kill(); });
  await waitFor(() => json(sbctl('status', '--json')).sessions.some((s) => s.name === 'mon2'), 60_000, { what: 'sbd to watch mon2' });
  // 31 s a run and 2 s to each restart: three starts span 66 s, never within systemd's 60 s
  const slow = json(sbctl('monitor', 'start', '--session', 'mon2', '--label', 'slow', '--json', '--', '/bin/sh', '-c', 'echo up; sleep 31; exit 3'));
  const unit = `sb-monitor-${slow.id}.service`;
  const quarantined = await waitFor(() => json(sbctl('monitor', 'list', '--session', 'mon2', '--json')).find((m) => m.id === slow.id && m.lifecycle === 'quarantined'), 300_000, { intervalMs: 1000, what: 'the slow crash loop to be quarantined' });
  assert.equal(quarantined.reason, 'it crashed 4 times within 30 min, each time restarted by systemd: sbd stopped it; sbctl monitor recover decides');
  assert.ok(inbox('mon2').some((n) => n.kind === 'quarantined' && n.text === `slow: ${quarantined.reason}`), 'its agent is told');
  await waitFor(() => !['active', 'activating'].includes(show(unit, 'ActiveState')), 30_000, { what: `${unit} to be stopped` });
  assert.notEqual(show(unit, 'Result'), 'start-limit-hit', 'sbd\'s fuse, not systemd\'s');
  // no fifth run: systemd's queued restart was cancelled with the stop
  await new Promise((r) => setTimeout(r, 5000));
  assert.ok(!['active', 'activating'].includes(show(unit, 'ActiveState')), `${unit} is not restarted`);

  // sbd gone between the quarantine and the stop: the record says quarantined, the unit runs on.
  // Made here while sbd is down: the stopped unit was unloaded, so the same unit is made again
  // (systemd-run, as sbd made it: the session's slice, restarted on failure).
  assert.equal(systemctl('stop', 'sbd.service').status, 0);
  const slice = show('mon2.scope', 'Slice');
  const started = spawnSync('systemd-run', ['--user', '--quiet', `--unit=${unit}`, `--slice=${slice}`, '-p', 'Restart=on-failure', '-p', 'RestartSec=2', '/bin/sh', '-c', 'sleep 31; exit 3'], { encoding: 'utf8' });
  assert.equal(started.status, 0, `systemd-run ${unit}: ${started.stderr}`);
  const runningAgain = show(unit, 'InvocationID');
  assert.equal(show(unit, 'ActiveState'), 'active');
  assert.equal(systemctl('start', 'sbd.service').status, 0);
  await waitFor(() => !['active', 'activating'].includes(show(unit, 'ActiveState')), 60_000, { what: `the next sbd to stop ${unit}, a quarantined monitor's unit that ran on` });
  assert.equal(json(sbctl('monitor', 'list', '--session', 'mon2', '--json')).find((m) => m.id === slow.id)?.lifecycle, 'quarantined', 'still waiting for the agent');
  assert.equal(inbox('mon2').filter((n) => n.kind === 'quarantined').length, 1, 'told once');
  // approve: a fresh unit of the same name (the old one stopped and reset first)
  const approved = json(sbctl('monitor', 'recover', 'approve', '--session', 'mon2', '--json', slow.handle));
  assert.deepEqual(approved, { handle: slow.handle, lifecycle: 'running' });
  await waitFor(() => show(unit, 'ActiveState') === 'active', 30_000, { what: `${unit} to run again` });
  assert.notEqual(show(unit, 'InvocationID'), runningAgain, 'a fresh invocation');
  assert.equal(show(unit, 'NRestarts'), '0', 'its restarts counted anew');
});
