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
const { labOnly, waitFor, readCgroupFile, hogArgv } = require('./helpers');
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
