// @ts-check
'use strict';
// Issue 13, poll and ssh monitors on systemd's own primitives, against the real user manager: a
// poll is a transient timer plus service (the service in the session's slice with its marker);
// it ticks on the timer and a notifyOn match of a tick's output reaches the inbox; a probe that
// fails in a row is backed off by a timer with systemd's jitter, then suspended with one notice
// and its units gone; a tick past its timeout is stopped by systemd (RuntimeMaxSec); stop
// removes timer and service; after sbd restarts a local poll awaits confirmation with its timer
// stopped. An ssh monitor to a host with no ssh server fails with ssh's own exit 255 and is
// suspended, where the guest has an ssh client. (A poll with `npm install` in it: 48-monitor.)
const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const dbus = require('dbus-next');
const { labOnly, waitFor } = require('./helpers');
const { startSbd, runSession, sbctl, systemctl } = require('./sbd-helpers');

const json = (r) => {
  assert.equal(r.status, 0, `sbctl: ${r.stderr}`);
  return JSON.parse(r.stdout);
};
// `sbctl inbox --json` and `sbctl monitor list --json` run in this process, by the functions
// sbctl runs: a look is then a file read or a D-Bus call, not a node start (seconds each in a
// loaded TCG guest, and the waits below look many times)
const ROOT = path.resolve(__dirname, '../../..');
const { runInbox } = require(path.join(ROOT, 'dist/cli/inbox.js'));
const { monitorList } = require(path.join(ROOT, 'dist/cli/monitor.js'));
/** @type {import('dbus-next').MessageBus | undefined} */
let bus;
const userBus = () => (bus ??= dbus.sessionBus({ busAddress: /** @type {string} */ (process.env.DBUS_SESSION_BUS_ADDRESS) }));
const closeBus = () => {
  bus?.disconnect();
  bus = undefined;
};
const said = async (f) => {
  const out = [];
  assert.equal(await f((l) => out.push(l)), 0);
  return out.join('\n').split('\n').filter(Boolean).map((l) => JSON.parse(l));
};
const inbox = (session) => said((say) => runInbox({ session, sinceId: 0, follow: false, json: true }, process.env, say));
const list = async (session) => (await said((say) => monitorList(userBus(), session, false, true, process.env, say)))[0];
const show = (unit, prop) => systemctl('show', '-P', prop, unit).stdout.trim();
const gone = (unit) => show(unit, 'LoadState') === 'not-found';
const unitsOf = (id) => ({ timer: `sb-monitor-${id}.timer`, service: `sb-monitor-${id}.service` });
const { spawnSync } = require('node:child_process');
/** waitFor, and on a timeout what the monitor, its units, systemd and sbd said. */
async function waitOn(session, id, pred, ms, what) {
  try {
    return await waitFor(pred, ms, { what });
  } catch (err) {
    throw new Error(`${/** @type {Error} */ (err).message}\n${await diagnose(session, id)}`);
  }
}
/** What the monitor, its units, systemd and sbd say of monitor `id`: for a failure's message. */
async function diagnose(session, id) {
  const u = unitsOf(id);
  const journal = spawnSync('journalctl', ['--user', '--no-pager', '-o', 'short-monotonic', '-n', '60', '-u', u.timer, '-u', u.service, '-u', 'sbd.service'], { encoding: 'utf8' });
  const state = (unit) => `${show(unit, 'LoadState')} ${show(unit, 'ActiveState')} ${show(unit, 'SubState')} (Result ${show(unit, 'Result')})`;
  return `monitor: ${JSON.stringify((await list(session)).find((m) => m.id === id))}\ntimer: ${state(u.timer)}; service: ${state(u.service)}\njournal:\n${journal.stdout}${journal.stderr}`;
}

test('poll: a timer plus service ticking into the inbox, backoff and suspension, timeout, stop, sbd\'s restart', labOnly, async (t) => {
  await startSbd({});
  const session = runSession('poll1', ['--memory-high', '256M'], ['sleep', '900']);
  t.after(() => { systemctl('stop', 'poll1.scope'); session.child.kill(); closeBus(); });
  await waitFor(() => json(sbctl('status', '--json')).sessions.some((s) => s.name === 'poll1'), 60_000, { what: 'sbd to watch poll1' });

  const status = path.join(os.homedir(), 'poll1-status');
  const flag = path.join(os.homedir(), 'poll1-flag-never-made');
  fs.writeFileSync(status, 'state: running\n');
  t.after(() => fs.rmSync(status, { force: true }));
  const poll = (...args) => json(sbctl('monitor', 'poll', '--session', 'poll1', '--json', ...args));
  // three at once, so their waits overlap: a read of a file the test rewrites, a probe that
  // always fails, a probe that outlives its timeout
  const st = poll('--label', 'st', '--interval', '5s', '--notify-on', '^state: done', '--coalesce', '1s', '--', 'cat', status);
  // 4 s to exit: what it proves is the exit status; on a loaded TCG guest (two guests at once in CI,
  // ready after 48 s) starting `test -e` took longer than the default 2 s, and the tick timed out
  const fl = poll('--label', 'flag', '--interval', '5s', '--timeout', '4s', '--max-failures', '2', '--', 'test', '-e', flag);
  const slow = poll('--label', 'slow', '--interval', '5s', '--timeout', '1s', '--max-failures', '1', '--', 'sleep', '30');
  assert.deepEqual([st.answer, fl.answer, slow.answer], ['created', 'created', 'created']);

  // the timer, and its service of the session's slice with the session's marker
  const u = unitsOf(st.id);
  const timerState = show(u.timer, 'ActiveState');
  if (timerState !== 'active') assert.fail(`the poll's timer is ${timerState}, not active, once created\n${await diagnose('poll1', st.id)}`);
  assert.equal(show(u.timer, 'Triggers'), u.service, 'the timer starts the poll\'s service');
  assert.equal(show(u.service, 'Slice'), 'sessions.slice');
  assert.match(show(u.service, 'Environment'), new RegExp(`SESSIONBRAKE_SESSION=poll1 SESSIONBRAKE_MONITOR=${st.id}`));
  assert.equal(show(u.service, 'KillMode'), 'control-group');
  assert.equal(show(u.service, 'RuntimeMaxUSec'), '2s', 'the per-tick timeout: half the interval by default');

  // it ticks on the timer: runs of the service, each a new invocation
  const invocation = () => { const id = show(u.service, 'InvocationID'); return /^0*$/.test(id) ? '' : id; };
  const first = await waitFor(invocation, 20_000, { what: 'the first tick' });
  await waitFor(() => { const id = invocation(); return id !== '' && id !== first; }, 20_000, { what: 'a second tick, started by the timer' });
  assert.equal(show(u.service, 'Result'), 'success');
  // a notifyOn match of a tick's output reaches the inbox
  fs.writeFileSync(status, 'state: done\n');
  const done = await waitFor(async () => (await inbox('poll1')).find((n) => n.from === st.handle && n.kind === 'match'), 30_000, { what: 'the match in the inbox' });
  assert.deepEqual(done.lines, ['state: done']);
  assert.equal(done.text, 'st: 1 new line matched');

  // a failing probe: one notice when the streak begins, suspended after 2 in a row, told once,
  // its timer and service gone
  const f = unitsOf(fl.id);
  const failing = await waitOn('poll1', fl.id, async () => (await inbox('poll1')).find((n) => n.from === fl.handle && n.kind === 'failing'), 30_000, 'the failing notice');
  assert.match(failing.text, /^flag: the probe exited with status 1; retrying less often/);
  const suspended = await waitOn('poll1', fl.id, async () => (await list('poll1')).find((m) => m.id === fl.id && m.lifecycle === 'suspended'), 40_000, 'the failing poll to be suspended');
  assert.match(suspended.reason, /^suspended after 2 failed ticks in a row; the last exited with status 1/);
  await waitOn('poll1', fl.id, () => gone(f.timer) && gone(f.service), 20_000, 'the suspended poll\'s timer and service to be gone');
  assert.deepEqual((await inbox('poll1')).filter((n) => n.from === fl.handle).map((n) => n.kind), ['failing', 'suspended'], 'one notice per streak and one on suspension, none per tick');
  // between the two ticks, the backoff was a timer of its own: started after the first failure,
  // its tick within backoffS(5 s, 1 failure) = 8 s, plus up to 4 s of systemd's jitter
  // (RandomizedDelayUSec) and 1 s of its accuracy; read from systemd's journal (monotonic times)
  const journal = spawnSync('journalctl', ['--user', '--no-pager', '-o', 'short-monotonic', '-u', f.timer, '-u', f.service], { encoding: 'utf8' }).stdout.split('\n');
  const at = (l) => Number(/^\[\s*([\d.]+)\]/.exec(l)?.[1]);
  const backoffStart = journal.find((l) => l.includes(`Started ${f.timer} - `) && l.includes('backing off after failures'));
  const ticks = journal.filter((l) => l.includes(`Starting ${f.service} - `)).map(at);
  assert.ok(backoffStart, `the backoff timer in the journal:\n${journal.join('\n')}`);
  // the regular timer ticks every 5 s until sbd has read the first failure and replaced it: under
  // CI's load it ticked once more first (sbd took 6.5 s); after the backoff timer started, one tick
  const regular = ticks.filter((t) => t < at(backoffStart));
  const backedOff = ticks.filter((t) => t >= at(backoffStart));
  assert.ok(regular.length >= 1, journal.join('\n'));
  assert.equal(backedOff.length, 1, journal.join('\n'));
  const wait = backedOff[0] - at(backoffStart);
  assert.ok(wait >= 8 - 0.1 && wait <= 12 + 1 + 0.5, `the backoff's tick came ${wait} s after its timer started`);

  // a tick longer than its timeout is stopped by systemd (RuntimeMaxSec): a failed tick
  const late = await waitOn('poll1', slow.id, async () => (await list('poll1')).find((m) => m.id === slow.id && m.lifecycle === 'suspended'), 30_000, 'the slow poll to be suspended');
  assert.match(late.reason, /the last timed out after 1 s and was stopped/);
  await waitOn('poll1', slow.id, () => gone(unitsOf(slow.id).timer) && gone(unitsOf(slow.id).service), 20_000, 'the slow poll\'s units to be gone');

  // stop removes its timer and its service
  assert.deepEqual(json(sbctl('monitor', 'stop', '--session', 'poll1', '--json', st.handle)), { handle: st.handle, lifecycle: 'stopped' });
  await waitOn('poll1', st.id, () => gone(u.timer) && gone(u.service), 20_000, 'the stopped poll\'s timer and service to be gone');

  // sbd's reaper never acts in a poll's tick service: a tick's exit is not an agent's. It did, and
  // killed the next tick while systemd's executor set it up (Debian 13: "the agent exited;
  // stopped what it left: 9 PID", "9" most likely systemd 257's executor run from an fd)
  const tickUnits = new Set([u.service, f.service, unitsOf(slow.id).service]);
  const reaped = spawnSync('journalctl', ['--user', '--no-pager', '-o', 'json', 'SYSLOG_IDENTIFIER=sbd'], { encoding: 'utf8' }).stdout.split('\n').filter(Boolean)
    .map((l) => JSON.parse(l)).filter((e) => (e.INCIDENT === 'procs-reaped' || e.INCIDENT === 'leftovers') && tickUnits.has(e.UNIT));
  assert.deepEqual(reaped.map((e) => `${e.UNIT}: ${e.MESSAGE}`), [], 'no leftovers told or reaped in a poll\'s tick service');

  // after sbd restarts, a local poll waits for confirmation: its timer is stopped
  const again = poll('--label', 'again', '--interval', '5s', '--', 'cat', status);
  const a = unitsOf(again.id);
  assert.equal(show(a.timer, 'ActiveState'), 'active');
  await startSbd({});
  const waiting = await waitOn('poll1', again.id, async () => (await list('poll1')).find((m) => m.id === again.id && m.lifecycle === 'awaiting-confirmation'), 60_000, 'the poll to await confirmation after the restart');
  assert.match(waiting.reason, /sbctl monitor recover approve/);
  await waitOn('poll1', again.id, () => gone(a.timer), 20_000, 'its timer to be stopped');
});

const ssh = '/usr/bin/ssh';
test('ssh: a host with no ssh server fails with ssh\'s own exit 255, counted as failures, suspended', {
  skip: labOnly.skip || (!fs.existsSync(ssh) && 'no ssh client in the guest image (test/vm/image/packages.txt has no openssh-client; adding it would rebuild every image): the ssh argv is proven in test/unit/monitor/ssh-command.test.js and poll-manager.test.js'),
}, async (t) => {
  await startSbd({});
  const session = runSession('poll2', ['--memory-high', '256M'], ['sleep', '900']);
  t.after(() => { systemctl('stop', 'poll2.scope'); session.child.kill(); closeBus(); });
  await waitFor(() => json(sbctl('status', '--json')).sessions.some((s) => s.name === 'poll2'), 60_000, { what: 'sbd to watch poll2' });
  const m = json(sbctl('monitor', 'ssh', '--session', 'poll2', '--label', 'remote', '--interval', '5s', '--max-failures', '1', '--json', '127.0.0.1', '--', 'uptime'));
  assert.equal(m.answer, 'created');
  const s = await waitFor(async () => (await list('poll2')).find((x) => x.id === m.id && x.lifecycle === 'suspended'), 60_000, { what: 'the ssh monitor to be suspended' });
  assert.match(s.reason, /exited with status 255 \(ssh itself failed/);
  assert.deepEqual((await inbox('poll2')).filter((n) => n.from === m.handle).map((n) => n.kind), ['suspended']);
});
