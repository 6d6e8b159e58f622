// @ts-check
'use strict';
// Issue 13: monitor records survive a restart; a corrupt one is found and set aside, never lost.
const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { saveRecord, loadRecords, archiveRecord, removeRecord, monitorsDir } = require('../../../dist/monitor/store.js');
const { parseMonitorSpec } = require('../../../dist/monitor/spec.js');
const { sourceHash, newMonitorId } = require('../../../dist/monitor/identity.js');

function record(over = {}) {
  const spec = parseMonitorSpec({ type: 'tail', path: '/tmp/build.log', notifyOn: ['ERROR'] });
  return {
    id: newMonitorId(), sessionId: 'fix-auth', sessionUnit: 'sb-fix-auth.scope', sessionInvocation: 'a'.repeat(32), spec, sourceHash: sourceHash(spec),
    lifecycle: 'running', createdAtMs: Date.now(), owner: { busName: ':1.42', epoch: 1 }, ticks: 0, consecutiveFailures: 0, offset: 1234, truncations: 0, ...over,
  };
}
const tmp = (t) => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sb-mon-'));
  t.after(() => fs.rmSync(dir, { recursive: true, force: true }));
  return dir;
};

test('a record reads back as written (the tail\'s offset included)', (t) => {
  const dir = tmp(t);
  const r = record();
  saveRecord(dir, r);
  assert.deepEqual(loadRecords(dir), { records: [r], corrupt: [] });
  removeRecord(dir, r.id);
  assert.deepEqual(loadRecords(dir), { records: [], corrupt: [] });
});

test('no directory yet: nothing on record', () => {
  assert.deepEqual(loadRecords('/nonexistent-sb/monitors'), { records: [], corrupt: [] });
});

test('corrupt records are reported with why, not dropped; archiving keeps them with the reason', (t) => {
  const dir = tmp(t);
  const good = record();
  saveRecord(dir, good);
  fs.writeFileSync(path.join(dir, 'torn.json'), '{"id": "abc');
  const wrong = record();
  fs.writeFileSync(path.join(dir, `${wrong.id}.json`), JSON.stringify({ ...wrong, lifecycle: 'dancing' }));
  const other = record();
  fs.writeFileSync(path.join(dir, `${newMonitorId()}.json`), JSON.stringify(other));
  const { records, corrupt } = loadRecords(dir);
  assert.deepEqual(records.map((r) => r.id), [good.id]);
  assert.equal(corrupt.length, 3);
  assert.ok(corrupt.some((c) => /not readable JSON/.test(c.why)));
  assert.ok(corrupt.some((c) => /lifecycle/.test(c.why)));
  assert.ok(corrupt.some((c) => /not the one of its file name/.test(c.why)));
  const torn = corrupt.find((c) => c.file.endsWith('torn.json'));
  const to = archiveRecord(dir, torn?.file ?? '', torn?.why ?? '');
  assert.ok(fs.existsSync(to), 'kept in archive/');
  assert.match(fs.readFileSync(`${to}.why`, 'utf8'), /not readable JSON/);
  assert.equal(loadRecords(dir).corrupt.length, 2, 'archived: no longer among the records');
});

test('the records live under the state directory', () => {
  assert.equal(monitorsDir({ HOME: '/home/ann' }), '/home/ann/.local/state/sessionbrake/monitors');
});
