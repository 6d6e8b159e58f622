// @ts-check
'use strict';
// Issue 14: each incident is a structured entry in the real journal, sent with the native
// protocol: `journalctl --user MESSAGE_ID=<the stop's id>` finds the stop with its session, unit
// and figures, and no command line; the standing-still before it has its own id; under journald
// the incident is not also a JSON line on sbd's stdout; `journalctl --user -u SCOPE` shows sbd's
// incidents about the session beside systemd's own.
const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const path = require('node:path');
const { spawnSync } = require('node:child_process');
const { labOnly, labGuest, waitFor } = require('./helpers');
const { startSbd, incidentCollector, startAgent, stopSessions } = require('./sbd-helpers');

const { MESSAGE_IDS } = require(path.resolve(__dirname, '../../../dist/journal/message-ids.js'));
const MiB = 2 ** 20;
const SESSION = 'jrnl1';

/** The user's journal entries matching `matches` (FIELD=value, -u UNIT ...), as journalctl -o json gives them. */
function journal(...matches) {
  const r = spawnSync('journalctl', ['--user', '--no-pager', '-o', 'json', ...matches], { encoding: 'utf8' });
  return r.stdout.split('\n').filter(Boolean).map((l) => JSON.parse(l));
}

test('incidents are structured journal entries: the stop found by its MESSAGE_ID with its figures', labOnly, async (t) => {
  t.diagnostic(`systemd ${labGuest().systemd}; journal storage: ${fs.existsSync('/var/log/journal') ? 'persistent (/var/log/journal)' : 'volatile (/run/log/journal)'}`);
  await startSbd({ detector: { graceS: 10 }, raise: { ceiling: '64M' }, stop: { termToKillS: 5 } });
  const startedS = Math.floor(Date.now() / 1000);
  const inc = await incidentCollector();
  t.after(() => { inc.close(); stopSessions(SESSION); });
  const { pids } = await startAgent(SESSION, 400, 200);
  const stopped = await inc.wait(SESSION, 'subtree-stopped', 90_000);

  const stopId = MESSAGE_IDS['subtree-stopped'];
  const entries = await waitFor(() => {
    const e = journal(`MESSAGE_ID=${stopId}`, `SESSION=${SESSION}`);
    return e.length > 0 && e;
  }, 20_000, { what: `journalctl --user MESSAGE_ID=${stopId} to find the stop` }).catch((err) => {
    const tail = spawnSync('journalctl', ['--user', '--no-pager', '-n', '30', '-o', 'short-monotonic'], { encoding: 'utf8' });
    throw new Error(`${/** @type {Error} */ (err).message}\nthe user's journal:\n${tail.stdout}${tail.stderr}`);
  });
  assert.equal(entries.length, 1, 'one entry for the one stop');
  const e = entries[0];
  t.diagnostic(`the stop's entry: ${JSON.stringify(Object.fromEntries(Object.entries(e).filter(([k]) => !k.startsWith('__'))))}`);
  assert.equal(e.MESSAGE, stopped.message, 'MESSAGE is the human sentence');
  assert.equal(e.PRIORITY, '4');
  assert.equal(e.SYSLOG_IDENTIFIER, 'sbd');
  assert.equal(e.INCIDENT, 'subtree-stopped');
  assert.equal(e.SESSION, SESSION);
  assert.equal(e.UNIT, `${SESSION}.scope`);
  assert.equal(e._SYSTEMD_USER_UNIT, 'sbd.service', 'sent by sbd itself (the journal\'s trusted field)');
  assert.equal(e.RSS_BYTES, String(stopped.rssBytes));
  assert.equal(e.BRAKE_BYTES, String(64 * MiB), 'the brake (MemoryHigh) of the session');
  assert.match(e.EVIDENCE, /^(own-high-moved|near-own-brake|alone-in-slice)( (own-high-moved|near-own-brake|alone-in-slice))*$/);
  assert.equal(e.PROGRAM, 'python3');
  assert.deepEqual(e.STOPPED_PIDS.split(' ').map(Number), [pids.build, pids.hog].sort((a, b) => a - b));
  const whole = JSON.stringify(e);
  for (const argv of ['mcp-server-filesystem', 'import', 'chunks', 'subprocess']) assert.ok(!whole.includes(argv), `no command line in the entry (${argv})`);

  // Another incident type, its own id: the standing-still that began it.
  const stillIncident = inc.of(SESSION, 'standing-still')[0];
  const still = journal(`MESSAGE_ID=${MESSAGE_IDS['standing-still']}`, `SESSION=${SESSION}`);
  assert.equal(still.length, inc.of(SESSION, 'standing-still').length, 'one entry per standing-still told');
  assert.equal(still[0].MESSAGE, stillIncident.message);
  assert.equal(still[0].PRIORITY, '4');
  assert.ok(Math.abs(Number(still[0].SHARE) - stillIncident.share) < 0.001, `SHARE ${still[0].SHARE}`);
  assert.ok(Math.abs(Number(still[0].DEADLINE_S) - stillIncident.deadlineS) < 0.001, `DEADLINE_S ${still[0].DEADLINE_S}`);
  assert.equal(still[0].EVIDENCE, stillIncident.evidence.join(' '));

  // No duplicates: under journald the incidents are not also JSON lines on sbd's stdout.
  const lines = spawnSync('journalctl', ['--user', '-u', 'sbd.service', '--no-pager', '-o', 'cat', '--since', `@${startedS}`], { encoding: 'utf8' }).stdout;
  assert.ok(!lines.includes('"event":"subtree-stopped"') && !lines.includes('"event":"standing-still"'), `no incident as a stdout line:\n${lines}`);
  assert.ok(!lines.includes('journal-send-failed'), 'no send failed');
  // USER_UNIT=: the scope's own journal view shows sbd's incidents about it.
  const ofScope = journal('-u', `${SESSION}.scope`).filter((x) => x.SYSLOG_IDENTIFIER === 'sbd').map((x) => x.INCIDENT);
  assert.ok(ofScope.includes('will-stop') && ofScope.includes('subtree-stopped'), `journalctl --user -u ${SESSION}.scope shows the stop: ${ofScope}`);

  // npm run selfcheck sends one debug entry the same way (from the test's own process).
  const check = spawnSync(process.execPath, [path.resolve(__dirname, '../../../dist/native-selfcheck.js')], { encoding: 'utf8' });
  assert.match(check.stdout, /^journal: one debug entry to \/run\/systemd\/journal\/socket -> datagram/m, check.stdout + check.stderr);
  await waitFor(() => journal('-t', 'sbd-selfcheck').some((x) => x.MESSAGE === 'sessionbrake selfcheck: the native journal protocol works' && x.PRIORITY === '7'), 10_000, { what: 'the selfcheck\'s entry in the journal' });
});
