// @ts-check
'use strict';
// Issue 15, item 3: with thousands of sessions sbd sends READY=1 before it has adopted them all
// (adoptBeforeReadyS), and status says "adopting" until done. sbd killed mid-adoption and started
// again by systemd adopts every session and keeps the running deadline it had saved.
const test = require('node:test');
const assert = require('node:assert/strict');
const { spawn, spawnSync } = require('node:child_process');
const { once } = require('node:events');
const { labOnly, waitFor, dbus, Variant } = require('./helpers');
const { startSbd, incidentCollector, startAgent, stopSessions, alive, sbctl, systemctl } = require('./sbd-helpers');

const IDLE = 100;
// Longer than everything between the verdict and the last status: sbd's restart, two sbctl calls,
// the kill, systemd's restart of sbd and the adoption of 100 sessions (with 90 s, as 34-restart,
// the deadline ran out first under load and the stop was done: the row said "ok")
const GRACE_S = 240;

/** N idle sessions (a `sleep` each in its own scope of sessions.slice), made over D-Bus in one go. */
async function idleSessions(n) {
  const bus = dbus.sessionBus({ busAddress: /** @type {string} */ (process.env.DBUS_SESSION_BUS_ADDRESS) });
  try {
    const mgr = (await bus.getProxyObject('org.freedesktop.systemd1', '/org/freedesktop/systemd1')).getInterface('org.freedesktop.systemd1.Manager');
    for (let i = 0; i < n; i++) {
      const child = spawn('sleep', ['3600'], { stdio: 'ignore', detached: true });
      await once(child, 'spawn');
      child.unref();
      await mgr.StartTransientUnit(`adopt-idle-${i}.scope`, 'fail', [['PIDs', new Variant('au', [child.pid])], ['Slice', new Variant('s', 'sessions.slice')]], []);
    }
  } finally {
    bus.disconnect();
  }
}

const statusJson = () => {
  const r = sbctl('status', '--json');
  return r.status === 0 ? JSON.parse(r.stdout) : undefined;
};

test('READY=1 before the adoption is done, "adopting" in status; killed mid-adoption, the next sbd adopts all and keeps the deadline', labOnly, async (t) => {
  await startSbd({ detector: { graceS: GRACE_S }, raise: { ceiling: '64M' }, stop: { termToKillS: 5 }, adoptBeforeReadyS: 0 });
  const inc = await incidentCollector();
  t.after(() => {
    inc.close();
    systemctl('stop', 'adopt-idle-*.scope');
    stopSessions('adopt-deadline');
  });
  const t0 = Date.now();
  await idleSessions(IDLE);
  t.diagnostic(`${IDLE} idle sessions made in ${((Date.now() - t0) / 1000).toFixed(1)} s`);
  const { pids } = await startAgent('adopt-deadline', 400, 300);
  const still = await inc.wait('adopt-deadline', 'standing-still', 60_000);

  // The user manager stopped right after sbd's READY=1: sbd's reads of the units wait, so the
  // adoption holds part-way, and what status says then is seen for sure.
  const manager = Number(spawnSync('systemctl', ['show', '-P', 'MainPID', 'user@1000.service'], { encoding: 'utf8' }).stdout.trim());
  assert.ok(manager > 1, 'the user manager\'s pid');
  assert.equal(systemctl('restart', 'sbd.service').status, 0);
  process.kill(manager, 'SIGSTOP');
  let killed = 0;
  try {
    const mid = statusJson();
    assert.ok(mid, 'sbd answers status while it adopts');
    const a = mid.service.adopting;
    assert.ok(a && a.adopted < a.listed && a.listed >= IDLE + 1, `status --json says adopting, part-way: ${JSON.stringify(a)}`);
    assert.ok(mid.sessions.length < IDLE + 1, `only the sessions read so far are listed (${mid.sessions.length})`);
    assert.match(sbctl('status').stdout, /^sbd: running .*; adopting: \d+ of \d+ units read/m);
    killed = mid.service.pid;
    process.kill(killed, 'SIGKILL'); // mid-adoption: systemd starts it again (Restart=on-failure)
  } finally {
    process.kill(manager, 'SIGCONT');
  }

  let asked = 0;
  let answered = 0;
  const done = await waitFor(() => {
    asked = Date.now();
    const s = statusJson();
    answered = Date.now();
    return s && s.service.pid !== killed && s.service.adopting === undefined && s;
  }, 120_000, { intervalMs: 1000, what: 'a new sbd to have adopted every session' });
  const journal = () => spawnSync('journalctl', ['--user', '-u', 'sbd.service', '-o', 'cat', '-n', '400', '--no-pager'], { encoding: 'utf8' }).stdout
    .split('\n').filter((l) => /"level":[4-6]0|"event":"(ready|adopted|starting)"/.test(l)).slice(-15).join('\n');
  const live = spawnSync('systemctl', ['--user', 'list-units', '--state=active', '--no-legend', 'adopt-idle-*.scope'], { encoding: 'utf8' }).stdout.trim().split('\n').filter(Boolean).length;
  const adopted = done.sessions.filter((/** @type {any} */ s) => s.name.startsWith('adopt-idle-')).length;
  assert.equal(adopted, IDLE, `every idle session adopted (${live} active in systemd); sbd's journal:\n${journal()}`);
  const row = done.sessions.find((/** @type {any} */ s) => s.name === 'adopt-deadline');
  assert.equal(row?.state, 'standing-still', `the deadline survived the kill mid-adoption (${((answered - still.atMs) / 1000).toFixed(0)} s after the verdict; incidents since: ${inc.of('adopt-deadline').map((i) => i.type).join(', ')})`);
  const [least, most] = [(still.atMs + GRACE_S * 1000 - answered) / 1000 - 1, (still.atMs + GRACE_S * 1000 - asked) / 1000 + 1];
  assert.ok(row.deadlineS >= least && row.deadlineS <= most, `deadline ${row.deadlineS} s left, expected ${least.toFixed(1)}-${most.toFixed(1)} s: it continued, it did not start over`);
  // (that the continued deadline ends in one stop, not two, is 34-restart's: not waited for here)
  assert.ok(alive(pids.agent), 'the agent lives');
});
