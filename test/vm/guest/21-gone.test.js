// @ts-check
'use strict';
// Issue 12, fault 4: when a session's cgroup empties while sbd watches it (every process of a
// stalled session killed), the session goes at once: its row from sbctl status and its saved
// deadline from the state file. sbd hears it from the kernel (cgroup.events "populated 0", the PSI
// trigger's POLLERR) or from systemd, whichever comes first; the journal says which.
const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { spawnSync } = require('node:child_process');
const { labOnly, waitFor, readCgroupFile, hogArgv, dbus } = require('./helpers');
const { parseStat } = require(path.join(__dirname, '../../../dist/proc/stat.js'));
const { startSbd, incidentCollector, runSession, stopSessions, cgroupOf, sbctl, systemctl } = require('./sbd-helpers');

const STATE = path.join(os.homedir(), '.local/state/sessionbrake/state.json');
/** How soon "at once" is: a status poll is a node start under TCG (seconds), so the test looks at the file. */
const PROMPT_MS = 5000;

const saved = () => {
  try {
    return JSON.parse(fs.readFileSync(STATE, 'utf8'))['gone1.scope'];
  } catch {
    return undefined;
  }
};

test('a session whose processes all die goes at once: its row and its saved deadline', labOnly, async (t) => {
  await startSbd({ detector: { graceS: 300 }, raise: { enabled: false } });
  const inc = await incidentCollector();
  t.after(() => { inc.close(); stopSessions('gone1'); });
  runSession('gone1', ['--memory-high', '64M', '--swap-max', '0'], hogArgv(300, 240, true));
  await inc.wait('gone1', 'standing-still', 90_000);
  await waitFor(() => saved()?.deadline, 10_000, { what: "gone1's deadline in the state file" });
  const row = JSON.parse(sbctl('status', '--json').stdout).sessions.find((s) => s.name === 'gone1');
  assert.equal(row?.state, 'standing-still');

  // every process of the session killed (the brake lifted first: a braked task dies slowly on 6.1)
  assert.equal(systemctl('set-property', '--runtime', 'gone1.scope', 'MemoryHigh=infinity').status, 0);
  const procs = readCgroupFile(cgroupOf('gone1'), 'cgroup.procs').split('\n').filter(Boolean).map(Number);
  const killedAt = Date.now();
  for (const pid of procs) {
    try { process.kill(pid, 'SIGKILL'); } catch { /* gone already */ }
  }
  await waitFor(() => saved() === undefined, PROMPT_MS, { intervalMs: 50, what: "gone1's saved state to go" });
  t.diagnostic(`saved state gone ${Date.now() - killedAt} ms after the kill`);
  const status = JSON.parse(sbctl('status', '--json').stdout);
  assert.equal(status.sessions.some((s) => s.name === 'gone1'), false, 'no row for it');
  const log = spawnSync('journalctl', ['--user', '-u', 'sbd.service', '--no-pager', '-o', 'cat'], { encoding: 'utf8' }).stdout;
  const removed = log.split('\n').filter((l) => l.includes('"event":"session-removed"') && l.includes('gone1.scope'));
  assert.equal(removed.length, 1, 'removed once');
  t.diagnostic(`removed by: ${JSON.parse(removed[0]).why}`);
});

// Found in bench:storm's profile (session 17): after a session's scope was stopped, sbd read its
// unit again and again. systemd loads a unit whose object path is read (a "not-found" stub), says
// UnitNew, unloads it (UnitRemoved), and sbd's registry read the unit on UnitNew: three ended
// sessions held sbd at 65 % of a CPU. Counted here on the user bus, as systemd sends them.
test('sessions stopped by systemctl: their units are not loaded again and again after their end (no endless UnitNew, UnitRemoved)', labOnly, async (t) => {
  await startSbd({ raise: { enabled: false } });
  const names = ['gone2', 'gone3', 'gone4'];
  for (const n of names) runSession(n, ['--memory-high', '64M'], ['sleep', '300']);
  t.after(() => stopSessions(...names));
  const rows = () => JSON.parse(sbctl('status', '--json').stdout).sessions.filter((s) => names.includes(s.name)).length;
  await waitFor(() => rows() === names.length, 60_000, { what: 'sbd to watch the three sessions' });
  const bus = dbus.sessionBus({ busAddress: /** @type {string} */ (process.env.DBUS_SESSION_BUS_ADDRESS) });
  t.after(() => bus.disconnect());
  /** @type {Record<string, number>} */
  const seen = {};
  bus.on('message', (/** @type {any} */ msg) => {
    if (msg.type !== dbus.MessageType.SIGNAL || msg.interface !== 'org.freedesktop.systemd1.Manager' || !['UnitNew', 'UnitRemoved'].includes(msg.member)) return;
    const unit = /** @type {string} */ (msg.body[0]);
    if (names.some((n) => unit === `${n}.scope`)) seen[`${msg.member} ${unit}`] = (seen[`${msg.member} ${unit}`] ?? 0) + 1;
  });
  await bus.call(new dbus.Message({
    destination: 'org.freedesktop.DBus', path: '/org/freedesktop/DBus', interface: 'org.freedesktop.DBus', member: 'AddMatch', signature: 's',
    body: ["type='signal',sender='org.freedesktop.systemd1',interface='org.freedesktop.systemd1.Manager'"],
  }));
  stopSessions(...names);
  await waitFor(() => rows() === 0, 30_000, { what: 'the three sessions to leave sbctl status' });
  // a read racing a unit's end may load its stub a few times before it settles: counted after that
  await new Promise((r) => setTimeout(r, 2000));
  for (const k of Object.keys(seen)) delete seen[k];
  const pid = Number(systemctl('show', '-P', 'MainPID', 'sbd.service').stdout.trim());
  const ticks = () => parseStat(fs.readFileSync(`/proc/${pid}/stat`, 'utf8'), `/proc/${pid}/stat`).cpuTicks; // sbd's own parser
  const before = ticks();
  await new Promise((r) => setTimeout(r, 10_000));
  const cpuS = (ticks() - before) / 100;
  t.diagnostic(`from 2 s after the end, in 10 s: ${JSON.stringify(seen)}; sbd's CPU ${cpuS.toFixed(2)} s`);
  // the loop loaded each ended unit about 30 times a second (297 in 10 s on Debian 12, sbd 96 % of a CPU)
  for (const n of names) assert.ok((seen[`UnitNew ${n}.scope`] ?? 0) <= 2, `${n}.scope loaded again ${seen[`UnitNew ${n}.scope`]} times in 10 s after its end: ${JSON.stringify(seen)}`);
});
