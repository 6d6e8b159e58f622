// @ts-check
'use strict';
// The slice feed's discipline: asleep until its trigger (or the machine watch) wakes it, one
// window per sample while not clear, asleep again once clear unless the machine is short; a
// slice removed (the trigger's "gone") ends it. Samples come from a fake reader.
const test = require('node:test');
const assert = require('node:assert/strict');
const { SliceFeed } = require('../../../dist/slice/feed.js');
const { parseConfig } = require('../../../dist/config/load.js');

const cfg = parseConfig({}, 'defaults').detector;
const MiB = 2 ** 20;
const GiB = 2 ** 30;

function setup({ short = false } = {}) {
  const clock = { t: 0 };
  const fig = { full: 0, highEvents: 0 };
  const verdicts = [];
  const trigger = { spec: undefined, fire: () => {}, gone: () => {}, closed: false };
  const feed = new SliceFeed('nbr.slice', '/fake/nbr.slice', {
    config: cfg,
    limits: { reserveBytes: 1 * GiB, criticalAvailableShare: 0.05, culpritMinGrowthBytes: 64 * MiB },
    onVerdict: (v) => verdicts.push(v.event),
    onGone: () => verdicts.push('gone'),
    log: () => {},
    now: () => clock.t,
    machineShort: () => short,
    armTrigger: (_file, spec, cb) => {
      trigger.spec = spec;
      trigger.fire = () => cb('fired');
      trigger.gone = () => cb('gone');
      return { close: () => { trigger.closed = true; }, unref: () => {} };
    },
    read: (_dir, atMs) => ({ atMs, currentBytes: 320 * MiB, highBytes: 320 * MiB, maxBytes: Infinity, anonBytes: 320 * MiB, shmemBytes: 0, highEvents: fig.highEvents, maxEvents: 0,
      memAvailableBytes: 4 * GiB, memTotalBytes: 8 * GiB, members: [{ path: 'a.scope', currentBytes: 320 * MiB, fullUs: fig.full }] }),
    readMembers: () => [{ path: 'a.scope', currentBytes: 320 * MiB, fullUs: 0 }],
  });
  return { feed, clock, fig, verdicts, trigger };
}

test('asleep until the trigger fires; windows while stalling; asleep again once clear', () => {
  const t = setup();
  t.feed.start();
  assert.deepEqual(t.trigger.spec, { kind: 'full', stallUs: 200_000, windowUs: 2_000_000 });
  assert.equal(t.feed.sampling, false, 'an idle slice costs nothing');
  t.trigger.fire();
  assert.equal(t.feed.sampling, true);
  t.clock.t = 2000; t.fig.full += 1_600_000; t.fig.highEvents += 5;
  t.feed.sample();
  t.clock.t = 4000; t.fig.full += 1_600_000; t.fig.highEvents += 5;
  t.feed.sample();
  assert.deepEqual(t.verdicts, ['first-sample', 'window', 'standing-still']);
  t.clock.t = 6000;
  t.feed.sample(); // no stall in this window: clear
  assert.equal(t.verdicts.at(-1), 'cleared');
  assert.equal(t.feed.sampling, false, 'asleep again');
  t.feed.stop();
});

test('the machine short of memory keeps it awake while the slice looks clear', () => {
  const t = setup({ short: true });
  t.feed.start();
  t.feed.wake('machine short');
  t.clock.t = 2000;
  t.feed.sample();
  assert.equal(t.verdicts.at(-1), 'window');
  assert.equal(t.feed.sampling, true);
  t.feed.stop();
});

test('the slice removed: the trigger says gone, the feed ends', () => {
  const t = setup();
  t.feed.start();
  t.trigger.gone();
  assert.deepEqual(t.verdicts, ['gone']);
  assert.equal(t.trigger.closed, true);
});

test('observe notes the members while calm (the culprit baseline), never during an episode', () => {
  const t = setup();
  let reads = 0;
  const read = t.feed['host'].readMembers;
  t.feed['host'].readMembers = (dir) => { reads++; return read(dir); };
  t.clock.t = 1000;
  t.feed.observe();
  assert.equal(t.feed.state.history.length, 1);
  t.clock.t = 1500;
  t.feed.observe();
  assert.equal(reads, 1, 'no read before a snapshot is due (the machine watch may tick every 100 ms)');
  t.feed.setState({ ...t.feed.state, episode: /** @type {any} */ ({ startedAtMs: 0 }) });
  t.clock.t = 9000;
  t.feed.observe();
  assert.equal(t.feed.state.history.length, 1);
});

test('slice feed without PSI: no trigger (ENOENT), describe() says what wakes it, a wake still samples', () => {
  const fs = require('node:fs');
  const os = require('node:os');
  const path = require('node:path');
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sb-slice-nopsi-'));
  const { SliceFeed } = require('../../../dist/slice/feed.js');
  const { parseConfig } = require('../../../dist/config/load.js');
  const c = parseConfig({}, 'test');
  const verdicts = [];
  const f = new SliceFeed('s.slice', dir, {
    config: c.detector, limits: { reserveBytes: 0, criticalAvailableShare: 0.05, culpritMinGrowthBytes: 64 * 2 ** 20 },
    onVerdict: (v) => verdicts.push(v), onGone: () => {}, log: () => {}, now: () => 0, machineShort: () => false,
    armTrigger: (file) => { throw Object.assign(new Error(`open ${file}: ENOENT`), { code: 'ENOENT' }); },
    read: (_d, atMs) => ({ atMs, currentBytes: 1, highBytes: Infinity, maxBytes: Infinity, anonBytes: 1, shmemBytes: 0, highEvents: 0, maxEvents: 0, members: [], memAvailableBytes: 2 ** 30, memTotalBytes: 2 ** 31, psi: false }),
    readMembers: () => [],
  });
  f.start();
  assert.match(f.describe(), /^no PSI: woken by its brake counter and the machine watch/);
  f.wake('test');
  assert.equal(verdicts.length, 1);
  f.stop();
});
