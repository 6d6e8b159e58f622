// @ts-check
'use strict';
// Issue 12, fault 8: sbd's user unit. A bad config stops sbd with exit code 2 and systemd does
// not restart it (RestartPreventExitStatus=2: no restart loop); the hardening a user manager can
// apply is in force (systemctl --user show, /proc of sbd) and sbd still works under it: a wedged
// session's brake is raised, and the notify command runs under the same sandbox (fault 7: its
// exit is logged and the process group it left is killed at the time-out, a grandchild too).
const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { labOnly, waitFor, hogArgv } = require('./helpers');
const { startSbd, incidentCollector, runSession, stopSessions, alive, sbctl, systemctl, SLICE_DIR } = require('./sbd-helpers');

/** The unit's properties as systemd has them. */
function show(...props) {
  const r = systemctl('show', 'sbd.service', ...props.map((p) => `--property=${p}`));
  return Object.fromEntries(r.stdout.trim().split('\n').map((l) => [l.slice(0, l.indexOf('=')), l.slice(l.indexOf('=') + 1)]));
}

/** Hardening directives and the value `systemctl --user show` gives for each (units/sbd.service). */
const HARDENING = {
  NoNewPrivileges: 'yes',
  LockPersonality: 'yes',
  RestrictSUIDSGID: 'yes',
  RestrictRealtime: 'yes',
  RestrictNamespaces: 'yes',
  SystemCallArchitectures: 'native',
  UMask: '0077',
  KeyringMode: 'private',
};

test('a bad config: sbd exits 2 and is not restarted (failed, NRestarts stays 0)', labOnly, async (t) => {
  assert.equal(sbctl('install').status, 0, 'the unit as units/ has it');
  const cfg = path.join(os.homedir(), '.config/sessionbrake/config.json');
  fs.mkdirSync(path.dirname(cfg), { recursive: true });
  fs.writeFileSync(cfg, JSON.stringify({ detector: { graceS: 'soon' } }));
  t.after(() => { fs.writeFileSync(cfg, '{}'); systemctl('reset-failed', 'sbd.service'); });
  systemctl('reset-failed', 'sbd.service');
  systemctl('restart', 'sbd.service');
  await waitFor(() => show('ActiveState').ActiveState === 'failed' || Number(show('NRestarts').NRestarts) > 0, 90_000, { what: 'sbd to fail or be restarted' });
  // RestartSec=2s: a restart would have come within these seconds.
  await new Promise((r) => setTimeout(r, 8_000));
  const p = show('ActiveState', 'Result', 'ExecMainStatus', 'NRestarts', 'RestartPreventExitStatus');
  assert.equal(p.NRestarts, '0', `not restarted: ${JSON.stringify(p)}`);
  assert.equal(p.ExecMainStatus, '2', 'sbd exits 2 on a bad config');
  assert.equal(p.ActiveState, 'failed');
  assert.equal(p.Result, 'exit-code');
  assert.match(p.RestartPreventExitStatus, /\b2\b/);
});

test('the hardening is in force, and under it sbd raises a brake and runs the notify command, whose group dies at the time-out', labOnly, async (t) => {
  const dir = fs.mkdtempSync('/var/tmp/notify-');
  fs.chmodSync(dir, 0o755);
  // The notifier appends the incident, leaves a child behind (its pid noted) and waits: the time-out kills both.
  const notifier = ['sh', '-c', 'cat >> "$1"; sleep 60 & echo $! >> "$2"; sleep 60', 'notifier', `${dir}/incidents`, `${dir}/children`];
  await startSbd({ detector: { graceS: 120 }, raise: { step: '256M', reserve: '256M' }, notifyCommand: notifier, notifyTimeoutS: 3 });
  const inc = await incidentCollector();
  t.after(() => { inc.close(); stopSessions('hard1'); });

  const p = show(...Object.keys(HARDENING), 'RestrictAddressFamilies', 'SystemCallFilter', 'SystemCallErrorNumber', 'MainPID');
  for (const [k, v] of Object.entries(HARDENING)) assert.equal(p[k], v, `${k}=${v} in force`);
  assert.deepEqual(p.RestrictAddressFamilies.split(' ').sort(), ['AF_INET', 'AF_INET6', 'AF_NETLINK', 'AF_UNIX']);
  assert.match(p.SystemCallFilter, /\bpidfd_send_signal\b/, 'a system-service filter that lets sbd signal through pidfds');
  assert.match(p.SystemCallFilter, /\bprocess_mrelease\b/, 'process_mrelease allowed (252\'s @system-service lacks it)');
  const status = fs.readFileSync(`/proc/${p.MainPID}/status`, 'utf8');
  assert.match(status, /^NoNewPrivs:\s+1$/m, 'no new privileges for sbd');
  assert.match(status, /^Seccomp:\s+2$/m, 'a seccomp filter on sbd');

  runSession('hard1', ['--memory-high', '64M', '--memory-max', '1G', '--swap-max', '0'], hogArgv(200, 150, true));
  const raised = await inc.wait('hard1', 'brake-raised', 90_000);
  assert.equal(raised.observeOnly, false);
  const told = await waitFor(() => fs.existsSync(`${dir}/incidents`) && fs.readFileSync(`${dir}/incidents`, 'utf8').includes('"brake-raised"'), 30_000, { what: 'the notify command to get brake-raised' });
  assert.ok(told);
  const children = await waitFor(() => fs.existsSync(`${dir}/children`) && fs.readFileSync(`${dir}/children`, 'utf8').trim().split('\n').map(Number), 10_000, { what: 'the notifier\'s children' });
  await waitFor(() => children.every((pid) => !alive(pid)), 20_000, { what: `the notifiers' children ${children.join(' ')} to be killed at the time-out` });
  const score = /Overall exposure level.*/.exec(require('node:child_process').spawnSync('systemd-analyze', ['--user', 'security', 'sbd.service', '--no-pager'], { encoding: 'utf8' }).stdout)?.[0];
  t.diagnostic(`systemd-analyze --user security sbd.service: ${score}`);
});

test("the CPU when short: the sessions' slice yields it (CPUWeight=20) to sbd (its own group in the manager's root slice, CPUWeight=1000) and systemd --user (init.scope, the default weight), under the user manager, which hands cpu down", labOnly, async (t) => {
  await startSbd({});
  t.after(() => stopSessions('cpuw1'));
  runSession('cpuw1', ['--memory-high', '256M'], ['sleep', '120']);
  await waitFor(() => fs.existsSync(path.join(SLICE_DIR, 'cpuw1.scope')), 30_000, { what: 'the session cpuw1' });
  const slice = systemctl('show', 'sessions.slice', '--property=CPUWeight').stdout.trim();
  assert.equal(slice, 'CPUWeight=20', 'CPUWeight=20 as units/sessions.slice has it');
  assert.equal(fs.readFileSync(path.join(SLICE_DIR, 'cpu.weight'), 'utf8').trim(), '20', "the kernel's cpu.weight of the sessions' slice");
  const userManager = path.dirname(SLICE_DIR);
  assert.match(fs.readFileSync(path.join(userManager, 'cgroup.subtree_control'), 'utf8'), /\bcpu\b/, 'the user manager hands cpu to its children');
  const props = show('ControlGroup', 'Slice', 'CPUWeight');
  assert.equal(props.Slice, '-.slice', "sbd.service in the user manager's root slice, as units/sbd.service has it");
  assert.equal(props.CPUWeight, '1000', 'CPUWeight=1000 as units/sbd.service has it');
  const sbdGroup = path.join('/sys/fs/cgroup', props.ControlGroup);
  assert.equal(path.dirname(sbdGroup), userManager, "sbd's own group is a sibling of the sessions' slice");
  assert.equal(path.basename(sbdGroup), 'sbd.service');
  assert.equal(fs.readFileSync(path.join(sbdGroup, 'cpu.weight'), 'utf8').trim(), '1000', "the kernel's cpu.weight of sbd's group");
  assert.equal(fs.readFileSync(path.join(userManager, 'init.scope', 'cpu.weight'), 'utf8').trim(), '100', "systemd --user's init.scope: the default weight");
  const doctor = sbctl('doctor');
  assert.match(doctor.stdout, /OK\s+cpu delegated\s+\S+sessions\.slice: cpu\.weight 20 \(sbd\.service: 1000, init\.scope: 100\)/, doctor.stdout);
});
