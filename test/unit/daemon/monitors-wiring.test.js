// @ts-check
'use strict';
// Issue 13: sbd's monitors wired to the inbox: what recovery tells (a tail's lines written while
// sbd was down, a spawn gone, an expiry) is told before sbd's interface is on the bus, and must
// reach the inbox all the same (before, the optional call to the not-yet bus skipped the write).
const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { recoverMonitors, startMonitors } = require('../../../dist/daemon/monitors.js');
const { InboxWriter, readInbox } = require('../../../dist/inbox/store.js');

/** sbd's monitors wired to a real inbox in a temporary directory, the rest stubbed. */
function wired(t, warned = []) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sb-monwire-'));
  t.after(() => fs.rmSync(dir, { recursive: true, force: true }));
  const inboxDir = path.join(dir, 'inbox');
  const m = startMonitors(/** @type {any} */ ({
    env: { XDG_STATE_HOME: dir, XDG_RUNTIME_DIR: dir, PATH: '/usr/bin' },
    manager: { onUnitEvent: () => {} },
    registry: { on: () => {}, get: () => undefined },
    watchFile: () => {}, unwatchFile: () => {},
    bus: () => undefined,
    owner: { busName: ':1.1', epoch: 1 },
    inbox: new InboxWriter(inboxDir),
    log: { info: () => {}, warn: (f) => warned.push(f) },
  }));
  t.after(() => m.close());
  return { m, inboxDir };
}

test('a notice told before sbd\'s bus service is exported is written to the inbox', (t) => {
  const { m, inboxDir } = wired(t);
  m.host.notify('fix', { atMs: Date.now(), from: 'abcd1234', kind: 'match', text: 'log: 1 new line matched', lines: ['LINE 2'] });
  assert.deepEqual(readInbox(inboxDir, 'fix').map((e) => e.lines), [['LINE 2']]);
});

test('recovery reads how far each monitor\'s told lines went from the session\'s inbox (a notice\'s monitor and through)', (t) => {
  const warned = [];
  const { m, inboxDir } = wired(t, warned);
  const told = (monitor, through) => m.host.notify('fix', { atMs: Date.now(), from: monitor.slice(0, 4), kind: 'match', text: 't', lines: ['x'], monitor, through });
  told('aaaa1111', 10);
  told('bbbb2222', 7);
  told('aaaa1111', 25);
  m.host.notify('fix', { atMs: Date.now(), from: 'aaaa', kind: 'exit', text: 'it exited', monitor: 'aaaa1111' });
  assert.deepEqual([...m.host.toldThrough('fix')], [['aaaa1111', { through: 25, notice: 3 }], ['bbbb2222', { through: 7, notice: 2 }]], 'the last through of each, with its notice id, from the file');
  assert.deepEqual([...m.host.toldThrough('nobody')], [], 'no inbox yet: nothing');
  fs.mkdirSync(path.join(inboxDir, 'odd.jsonl')); // unreadable as a file (EISDIR), even for root
  assert.deepEqual([...m.host.toldThrough('odd')], [], 'unreadable: the saved offsets stand');
  assert.equal(warned.at(-1)?.event, 'inbox-not-read');
});

test('the records on disk are loaded when the monitors start, before sbd\'s interface is on the bus; recovery, after adoption, plans them', async (t) => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sb-monwire-'));
  t.after(() => fs.rmSync(dir, { recursive: true, force: true }));
  const session = { id: 'fix', unit: 'sb-fix.scope', invocationId: 'a'.repeat(32), slice: 'sessions.slice', memoryHigh: 2 ** 29 };
  let adopted = false;
  const logged = [];
  const wiring = /** @type {any} */ ({
    env: { XDG_STATE_HOME: dir, XDG_RUNTIME_DIR: dir, PATH: '/usr/bin' },
    manager: { onUnitEvent: () => {}, getUnit: async () => undefined },
    registry: { on: () => {}, get: (id) => (adopted && id === 'fix' ? session : undefined) },
    watchFile: () => {}, unwatchFile: () => {},
    bus: () => undefined,
    owner: { busName: ':1.1', epoch: 1 },
    inbox: new InboxWriter(path.join(dir, 'inbox')),
    log: { info: (f) => logged.push(f), warn: () => {} },
  });
  adopted = true;
  const first = startMonitors(wiring);
  const a = await first.start('fix', { type: 'tail', path: path.join(dir, 'app.log'), label: 'app' });
  first.close();
  adopted = false; // the restarted sbd has not adopted its sessions yet
  const again = startMonitors({ ...wiring, owner: { busName: ':1.2', epoch: 2 } });
  t.after(() => again.close());
  assert.deepEqual(again.list('fix').map((r) => [r.id, r.lifecycle]), [[a.id, 'running']], 'a list before recovery shows what is on record');
  adopted = true;
  await recoverMonitors(again, { ...wiring, owner: { busName: ':1.2', epoch: 2 } });
  assert.deepEqual(logged.at(-1)?.actions?.map((x) => [x.id, x.action]), [[a.id, 'resume']]);
  assert.equal(again.get(a.id)?.owner.busName, ':1.2', 'the lease passed to the new sbd');
});
