// @ts-check
'use strict';
// The slice feed's discipline: asleep until its trigger (or the machine watch) wakes it, one
// window per sample while not clear, asleep again once clear unless the machine is short; a
// slice removed (the trigger's "gone") ends it. Samples come from a fake reader.
const test = require('node:test');
const assert = require('node:assert/strict');
const { SliceFeed } = require('../../../dist/slice/feed.js');
const { chooseCulprit } = require('../../../dist/slice/culprit.js');
const { parseConfig } = require('../../../dist/config/load.js');

const cfg = parseConfig({}, 'defaults').detector;
const MiB = 2 ** 20;
const GiB = 2 ** 30;

function setup({ short = false } = {}) {
  const clock = { t: 0 };
  const fig = { full: 0, highEvents: 0, current: 320 * MiB, members: ['a.scope'] };
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
    readMembers: () => fig.members.map((p) => ({ path: p, currentBytes: 320 * MiB, fullUs: 0 })),
    listMembers: () => fig.members,
    readCurrent: () => fig.current,
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

test('observe notes the members when the slice moved a quarter of the minimum growth, or after 30 s steady (re-dated, not read, while the same members and the read under 5 minutes old); never during an episode', () => {
  const t = setup();
  let reads = 0;
  const read = t.feed['host'].readMembers;
  t.feed['host'].readMembers = (dir) => { reads++; return read(dir); };
  t.clock.t = 1000;
  t.feed.observe();
  assert.equal(t.feed.state.history.length, 1, 'the first note');
  t.clock.t = 1500; t.fig.current += 100 * MiB;
  t.feed.observe();
  assert.equal(reads, 1, 'no read of the members before a snapshot is due (2 s), however much the slice moved');
  t.clock.t = 3500; t.fig.current = 320 * MiB + 15 * MiB;
  t.feed.observe();
  assert.equal(reads, 1, 'moved 15 MiB: under a quarter of the 64 MiB minimum growth, not noted');
  t.clock.t = 5500; t.fig.current = 320 * MiB + 16 * MiB;
  t.feed.observe();
  assert.equal(reads, 2, 'moved 16 MiB: noted');
  t.clock.t = 5500 + 29_000;
  t.feed.observe();
  assert.equal(reads, 2, 'steady 29 s: not noted');
  t.clock.t = 5500 + 30_000;
  t.feed.observe();
  assert.equal(reads, 2, 'steady 30 s, the same members: the note re-dated, not read');
  assert.equal(t.feed.state.history.at(-1).atMs, 5500 + 30_000, 'so that a stall after a long calm finds a baseline within the minute');
  t.clock.t = 5500 + 60_000; t.fig.members = ['a.scope', 'b.scope'];
  t.feed.observe();
  assert.equal(reads, 3, 'steady 30 s more, but a member came: read');
  for (let k = 1; k <= 10; k++) {
    t.clock.t = 5500 + 60_000 + k * 30_000;
    t.feed.observe();
  }
  assert.equal(reads, 4, 'steady with the same members: re-dated for 5 minutes after the read, then read again');
  assert.equal(t.feed.state.history.at(-1).atMs, 5500 + 60_000 + 300_000);
  t.feed.setState({ ...t.feed.state, episode: /** @type {any} */ ({ startedAtMs: 0 }) });
  t.clock.t = 500_000; t.fig.current = 0;
  t.feed.observe();
  assert.equal(reads, 4, 'no note during an episode');
  t.feed.stop();
});

test('the slice notes its members on its own 2 s tick, not the machine watch\'s: a member that filled the brake from nothing within 15 s is the culprit (CI, guest 36 on Debian 13)', (t) => {
  const { feed, clock, m, stall } = innocentGreedyFeed(t);
  const step = (ms) => { clock.t += ms; t.mock.timers.tick(ms); };
  feed.start(); // the innocent just started
  step(2000); m.innocent = 179 * MiB; // it settles
  step(2000); m.greedy = 10 * MiB; // the greedy one starts: 2 s later, well within the machine watch's 15 s
  step(2000); m.greedy = 150 * MiB; // and fills the slice's brake
  const { still, culprit } = stall(step); // its trigger: the feed takes its windows on its own timer from now
  assert.deepEqual(still.episode.membersAtStart, { 'innocent.scope': 179 * MiB }, 'the baseline: the innocent settled, before the greedy one grew');
  assert.equal(culprit.culprit?.path, 'greedy.scope', culprit.why);
  feed.stop();
});

test('slice feed without PSI: no trigger (ENOENT), describe() says what wakes it, a wake still samples', () => {
  const fs = require('node:fs');
  const os = require('node:os');
  const path = require('node:path');
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sb-slice-nopsi-'));
  const { SliceFeed } = require('../../../dist/slice/feed.js');
const { chooseCulprit } = require('../../../dist/slice/culprit.js');
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

test("a window's note counts as the last note: the slice falling back to the earlier total is a move, and the members are read again", () => {
  const t = setup();
  let reads = 0;
  const read = t.feed['host'].readMembers;
  t.feed['host'].readMembers = (dir) => { reads++; return read(dir); };
  const sampleRead = t.feed['host'].read;
  t.feed['host'].read = (dir, atMs) => ({ ...sampleRead(dir, atMs), currentBytes: t.fig.current, highBytes: Infinity });
  t.feed.start();
  t.clock.t = 1000;
  t.feed.observe();
  assert.equal(reads, 1, 'noted at 320 MiB');
  t.fig.current = 420 * MiB; // a member grew 100 MiB
  t.clock.t = 2000;
  t.trigger.fire();
  t.clock.t = 4000;
  t.feed.sample();
  assert.equal(t.feed.state.history.at(-1).atMs, 4000, "the window's sample noted the members at 420 MiB");
  assert.equal(t.feed.sampling, false, 'clear: asleep');
  t.fig.current = 320 * MiB; // it freed them again
  t.clock.t = 6500;
  t.feed.observe();
  assert.equal(reads, 2, "back at the first note's total, 100 MiB from the window's note: moved, read");
  t.feed.stop();
});

/** A slice of an innocent and a greedy member on a fake clock, for the baseline's notes. */
function innocentGreedyFeed(t) {
  t.mock.timers.enable({ apis: ['setInterval'] });
  const clock = { t: 0 };
  const m = { innocent: 1 * MiB, greedy: 0, full: 0, highEvents: 0 };
  const members = () => [{ path: 'innocent.scope', currentBytes: m.innocent, fullUs: m.full }, ...(m.greedy > 0 ? [{ path: 'greedy.scope', currentBytes: m.greedy, fullUs: m.full }] : [])];
  const verdicts = [];
  let fire = () => {};
  const feed = new SliceFeed('nbr.slice', '/fake/nbr.slice', {
    config: cfg,
    limits: { reserveBytes: 1 * GiB, criticalAvailableShare: 0.05, culpritMinGrowthBytes: 64 * MiB },
    onVerdict: (v) => verdicts.push(v),
    onGone: () => {},
    log: () => {},
    now: () => clock.t,
    machineShort: () => false,
    armTrigger: (_file, _spec, cb) => { fire = () => cb('fired'); return { close: () => {}, unref: () => {} }; },
    read: (_dir, atMs) => ({ atMs, currentBytes: m.innocent + m.greedy, highBytes: 320 * MiB, maxBytes: Infinity, anonBytes: m.innocent + m.greedy, shmemBytes: 0, highEvents: m.highEvents, maxEvents: 0,
      memAvailableBytes: 4 * GiB, memTotalBytes: 8 * GiB, members: members() }),
    readMembers: () => members(),
    readCurrent: () => m.innocent + m.greedy,
  });
  /** The slice stalls for two windows; the culprit against the episode's baseline. */
  const stall = (step) => {
    fire();
    for (let i = 0; i < 2; i++) {
      m.full += 1_800_000; m.highEvents += 5;
      step(2000);
    }
    const still = verdicts.find((v) => v.event === 'standing-still');
    assert.ok(still, `the slice stands still (${verdicts.map((v) => v.event).join(', ')})`);
    return { still, culprit: chooseCulprit(members(), still.episode.membersAtStart, 320 * MiB, 64 * MiB) };
  };
  return { feed, clock, m, stall };
}

test('a member that joins the slice is noted at once: the others settled before it grew are the baseline, even when it fills the brake within one tick (CI, guest 36 on Debian 12)', (t) => {
  const { feed, clock, m, stall } = innocentGreedyFeed(t);
  const step = (ms) => { clock.t += ms; t.mock.timers.tick(ms); };
  feed.start(); // the innocent just started: noted at 1 MiB
  clock.t = 1000; m.innocent = 179 * MiB; // it settles before the first tick
  clock.t = 1500; m.greedy = 1 * MiB;
  feed.noteJoin(); // the greedy one's scope appeared (sbd's 'added')
  clock.t = 1900; m.greedy = 150 * MiB; // and it fills the brake before the tick
  step(100); // the tick at 2 s: 329 MiB, no room left
  const { still, culprit } = stall(step);
  assert.deepEqual(still.episode.membersAtStart, { 'innocent.scope': 179 * MiB, 'greedy.scope': 1 * MiB }, 'the baseline: the note at the join');
  assert.equal(culprit.culprit?.path, 'greedy.scope', culprit.why);
  feed.stop();
});

test('a join note is taken at most every half second (a burst of new sessions reads the members twice a second, not once per session) and never during an episode', (t) => {
  const { feed, clock, m, stall } = innocentGreedyFeed(t);
  const step = (ms) => { clock.t += ms; t.mock.timers.tick(ms); };
  let reads = 0;
  const read = feed['host'].readMembers;
  feed['host'].readMembers = (dir) => { reads++; return read(dir); };
  feed.start();
  clock.t = 300;
  feed.noteJoin();
  assert.equal(feed.state.history.length, 1, '300 ms after the last note: none');
  assert.equal(reads, 1, 'and no read of the members for it');
  clock.t = 600;
  feed.noteJoin();
  assert.equal(feed.state.history.length, 2, '600 ms after: noted');
  m.innocent = 179 * MiB; m.greedy = 150 * MiB;
  step(1400);
  stall(step);
  const notes = feed.state.history.length;
  clock.t += 1000;
  feed.noteJoin();
  assert.equal(feed.state.history.length, notes, 'standing still: the baseline is chosen, nothing noted');
  feed.stop();
});

test("a tick that runs a little short of 2 s on sbd's clock still notes (libuv times its ticks from the loop's cached time, taken before the note's own reading)", (t) => {
  const { feed, clock, m } = innocentGreedyFeed(t);
  feed.start(); // noted at 0
  m.innocent = 179 * MiB;
  clock.t = 1990; // the tick, 10 ms short on the monotonic clock
  t.mock.timers.tick(2000);
  assert.equal(feed.state.history.length, 2, 'the settled innocent noted at the first tick');
  assert.equal(feed.state.history.at(-1).members['innocent.scope'], 179 * MiB);
  feed.stop();
});
