// @ts-check
'use strict';
const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { writeRecord, readRecord, removeRecord, recordsDir } = require('../../../dist/sessions/record.js');
const { isUnder, markerOf, ownProcesses } = require('../../../dist/proc/scan.js');
const { mergeTargets } = require('../../../dist/actions/reap.js');
const { parseDurationS } = require('../../../dist/util/size.js');
const { formatIncident } = require('../../../dist/cli/watch.js');

test('session records: written whole (mode 600), read back, bad ones said and ignored', () => {
  const dir = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'sb-rec-')), 'sessions');
  const rec = { unit: 'a.scope', id: 'a', agentPid: 42, agentStartTicks: 7, heartbeat: '/h', reap: false, createdAtMs: 1 };
  const file = writeRecord(dir, rec);
  assert.equal(fs.statSync(file).mode & 0o777, 0o600);
  assert.deepEqual(readRecord(dir, 'a.scope'), rec);
  assert.equal(readRecord(dir, 'missing.scope', () => assert.fail('a missing record is no fault')), undefined);
  fs.writeFileSync(path.join(dir, 'bad.scope.json'), '{"unit": 1}');
  const said = [];
  assert.equal(readRecord(dir, 'bad.scope', (f, why) => said.push(why)), undefined);
  assert.deepEqual(said, ['not a session record']);
  removeRecord(dir, 'a.scope');
  assert.equal(readRecord(dir, 'a.scope'), undefined);
  assert.equal(recordsDir({ XDG_RUNTIME_DIR: '/run/user/7' }), '/run/user/7/sessionbrake/sessions');
  assert.equal(recordsDir({}), undefined);
});

test('isUnder: the path itself and what is below it, not a sibling with the same prefix', () => {
  assert.ok(isUnder('/w/repo', '/w/repo'));
  assert.ok(isUnder('/w/repo/src/a.c', '/w/repo'));
  assert.ok(isUnder('/w/repo/x', '/w/repo/'));
  assert.ok(!isUnder('/w/repo2/x', '/w/repo'));
  assert.ok(!isUnder('/w', '/w/repo'));
});

test('the marker is read from a process environment; only our own processes are scanned', () => {
  assert.equal(markerOf(process.pid), process.env.SESSIONBRAKE_SESSION);
  const mine = ownProcesses();
  assert.ok(mine.every((p) => p.uid === process.getuid?.()));
  assert.ok(!mine.some((p) => p.pid === process.pid), 'never ourselves');
});

test('reap targets: each pid once, the excluded (a live agent) left out', () => {
  const p = (pid) => ({ pid, ppid: 1, comm: 'x', uid: 0, rssBytes: 0, cpuTicks: 0, startTicks: 0, argv: [] });
  assert.deepEqual(mergeTargets([[p(3), p(1)], [p(1), p(2)]], new Set([2])).map((x) => x.pid), [1, 3]);
});

test('durations on the command line', () => {
  assert.equal(parseDurationS('10s'), 10);
  assert.equal(parseDurationS('2m'), 120);
  assert.equal(parseDurationS('500ms'), 0.5);
  assert.equal(parseDurationS('7'), 7);
  assert.equal(parseDurationS('soon'), undefined);
});

test('an incident as one line for sbctl watch', () => {
  const line = formatIncident({ type: 'brake-raised', unit: 'b.scope', session: 'b', atMs: Date.UTC(2026, 10, 29, 23, 0, 5), message: 'brake 64.0M -> 320M (step)', observeOnly: true });
  assert.equal(line, '2026-11-29 23:00:05  b                brake-raised     [observe-only] brake 64.0M -> 320M (step)');
});
