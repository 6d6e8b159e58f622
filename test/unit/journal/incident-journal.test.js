// @ts-check
'use strict';
// Incidents under journald: sent natively (the real addon, to a socket of our own standing in for
// journald's) and then not also written as a stdout line; a send that fails is warned of once,
// naming the socket and the errno, and every incident the socket does not take still gets its
// stdout line. Outside journald nothing changes. The real journal: test/vm/guest/57-journal.
const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const pino = require('pino');
const { Incidents } = require('../../../dist/daemon/incidents.js');
const { incidentJournal } = require('../../../dist/journal/incident-journal.js');
const { journalListener, decodeEntry } = require('../../support/journal-listener.js');

const MiB = 2 ** 20;
/** A logger whose lines are kept, parsed. */
function capture() {
  const lines = [];
  return { lines, log: pino({ level: 'info' }, { write: (s) => lines.push(JSON.parse(s)) }) };
}
const stop = (session = 'build1') => ({
  type: 'subtree-stopped', unit: `${session}.scope`, session, atMs: Date.now(), observeOnly: false,
  message: 'stopped python3: 2 by SIGTERM, 0 by SIGKILL',
  name: 'python3', pids: [402, 401], rssBytes: 310 * MiB, brakeBytes: 64 * MiB, sparedGit: [], protectedPids: [300], evidence: ['near-own-brake'], share: 0.9, anonShare: 0.8,
  terminated: [401, 402], killed: [], skipped: [], survived: [], brakeLowered: false,
});

test('outside journald (no JOURNAL_STREAM) there is no native writer: incidents are stdout lines as before', () => {
  const { lines, log } = capture();
  assert.equal(incidentJournal({}, log), undefined);
  const incidents = new Incidents(log, incidentJournal({}, log));
  incidents.tell(stop());
  assert.equal(lines.length, 1);
  assert.equal(lines[0].event, 'subtree-stopped');
});

test('under journald an incident goes to the journal\'s socket as a structured entry, and no stdout line', async (t) => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sb-incident-journal-'));
  t.after(() => fs.rmSync(dir, { recursive: true, force: true }));
  const sock = path.join(dir, 'socket');
  const l = journalListener(sock);
  t.after(l.close);
  await l.ready;
  const { lines, log } = capture();
  const incidents = new Incidents(log, incidentJournal({ JOURNAL_STREAM: '8:1234' }, log, sock));
  const heard = [];
  incidents.onIncident((i) => heard.push(i.type));
  incidents.tell(stop());
  const fields = Object.fromEntries(decodeEntry((await l.received).bytes).map(([k, v]) => [k, v.toString('utf8')]));
  assert.deepEqual(lines, [], 'not also written to stdout');
  assert.deepEqual(heard, ['subtree-stopped'], 'the other listeners (D-Bus, inbox) still hear it');
  assert.equal(incidents.lastAction('build1.scope')?.includes('subtree-stopped'), true);
  assert.equal(fields.MESSAGE, 'stopped python3: 2 by SIGTERM, 0 by SIGKILL');
  assert.equal(fields.MESSAGE_ID, '6442e5c022af415d9e7032b8ff0e0980');
  assert.equal(fields.PRIORITY, '4', 'a stop is a warning, as its stdout line was');
  assert.equal(fields.SYSLOG_IDENTIFIER, 'sbd');
  assert.deepEqual([fields.SESSION, fields.UNIT, fields.RSS_BYTES, fields.BRAKE_BYTES, fields.EVIDENCE, fields.STOPPED_PIDS], ['build1', 'build1.scope', String(310 * MiB), String(64 * MiB), 'near-own-brake', '401 402']);
});

test('a send that fails: warned of once (the socket and the errno), and each incident still gets its stdout line', () => {
  const sock = path.join(os.tmpdir(), `sb-no-journal-${process.pid}`);
  const { lines, log } = capture();
  const incidents = new Incidents(log, incidentJournal({ JOURNAL_STREAM: '8:1234' }, log, sock));
  incidents.tell(stop('a'));
  incidents.tell(stop('b'));
  const warnings = lines.filter((l) => l.event === 'journal-send-failed');
  assert.equal(warnings.length, 1, 'told once');
  assert.equal(warnings[0].level, 40);
  assert.equal(warnings[0].socket, sock);
  assert.equal(warnings[0].code, 'ENOENT');
  assert.match(warnings[0].msg, new RegExp(`^cannot send incidents natively to the journal's socket ${sock} \\(sendmsg: ENOENT\\)`));
  assert.deepEqual(lines.filter((l) => l.event === 'subtree-stopped').map((l) => l.session), ['a', 'b'], 'nothing lost');
});
