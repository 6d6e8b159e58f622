// @ts-check
'use strict';
// Issue 13, one owner: sbd's well-known name is the lease on what sbd owns (saved stops and
// deadlines, the monitors). A second sbd started beside a running one must leave before it reads
// or changes any of it: before this test, it attached to systemd, adopted the sessions and ran the
// monitors' recovery (stopping a local poll's timer, archiving records) before it asked for the name.
const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const pino = require('pino');
const { FakeBroker } = require('../../support/fake-bus');
const { parseConfig } = require('../../../dist/config/load.js');
const { startService } = require('../../../dist/daemon/service.js');

test('a second sbd leaves at once, naming the owner, having sent nothing to systemd nor touched the monitors\' records', async (t) => {
  const state = fs.mkdtempSync(path.join(os.tmpdir(), 'sb-lease-'));
  t.after(() => fs.rmSync(state, { recursive: true, force: true }));
  const records = path.join(state, 'sessionbrake', 'monitors');
  fs.mkdirSync(records, { recursive: true });
  const record = path.join(records, '0b1c2d3e-0000-4000-8000-000000000001.json');
  fs.writeFileSync(record, '{"a record the first sbd owns": true}\n');
  const broker = new FakeBroker();
  const first = await broker.connect();
  await first.requestName('dev.sessionbrake.Manager1', 4);
  const second = await broker.connect();
  const sent = [];
  second.on('message', () => {});
  const send = second.send.bind(second);
  second.send = (msg) => { sent.push(`${msg.destination ?? ''} ${msg.member ?? ''}`); return send(msg); };
  t.after(() => { first.disconnect(); second.disconnect(); });
  const env = { ...process.env, XDG_STATE_HOME: state, XDG_RUNTIME_DIR: state };
  await assert.rejects(startService(parseConfig({}, 'test'), second, pino({ level: 'silent' }), env),
    (err) => err.name === 'NameTakenError' && err.message.includes(`another sbd (${first.name})`));
  assert.deepEqual(sent.filter((m) => m.startsWith('org.freedesktop.systemd1')), [], 'nothing asked of systemd');
  assert.equal(fs.readFileSync(record, 'utf8'), '{"a record the first sbd owns": true}\n', 'the record is where it was, unread by recovery');
  assert.ok(!fs.existsSync(path.join(records, 'archive')), 'nothing archived');
});

test('while sbd starts (its name owned, its interface not yet exported) sbctl reads it as not answering yet, not as a failure', async (t) => {
  const { queryService } = require('../../../dist/cli/status.js');
  const { monitorList } = require('../../../dist/cli/monitor.js');
  const broker = new FakeBroker();
  const starting = await broker.connect();
  await starting.requestName('dev.sessionbrake.Manager1', 4);
  const client = await broker.connect();
  t.after(() => { starting.disconnect(); client.disconnect(); });
  assert.equal(await queryService(client), undefined, 'status falls back to systemd until sbd answers');
  await assert.rejects(monitorList(client, 'fix', false, true, process.env, () => {}),
    (err) => err.name === 'NoService' && err.exitCode === 3 && /sbd is starting/.test(err.message));
});
