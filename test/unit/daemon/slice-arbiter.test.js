// @ts-check
'use strict';
// Issue 15, item 5: a slice member's figures come from its session feed where it can give them
// (its last sample, fresh enough for what is wanted, or a read through the files it holds open),
// so that a storm's slice windows do not read every member's files by path again.
const test = require('node:test');
const assert = require('node:assert/strict');
const { memberFiguresOf, MEMBER_FIGURES_FRESH_SHARE, MEMBER_SIZE_FRESH_SHARE } = require('../../../dist/daemon/slice-arbiter.js');

/** A feed whose last sample was taken at `sampledAt` and which holds its files when `holds`. */
function feed(sampledAt, holds) {
  const calls = [];
  return {
    calls,
    recentFigures: (now, maxAgeMs) => {
      calls.push(['recent', maxAgeMs]);
      return now - sampledAt <= maxAgeMs ? { atMs: sampledAt, currentBytes: 100, fullUs: 7 } : undefined;
    },
    heldFigures: (now, sizesOnly) => {
      calls.push(['held', sizesOnly]);
      return holds ? { atMs: now, currentBytes: 200, fullUs: sizesOnly ? 0 : 9 } : undefined;
    },
  };
}

test('the thresholds: a stall share wants half a window at most, a size a whole one', () => {
  assert.equal(MEMBER_FIGURES_FRESH_SHARE, 0.5);
  assert.equal(MEMBER_SIZE_FRESH_SHARE, 1);
});

test("memberFiguresOf: a sample 1.5 s old stands for a size but not for a stall's share (2 s windows)", () => {
  const f = feed(1000, false);
  assert.deepEqual(memberFiguresOf(f, 2500, 2000, true), { atMs: 1000, currentBytes: 100, fullUs: 7 });
  assert.equal(memberFiguresOf(f, 2500, 2000, false), undefined, 'no held files: the slice reads by path');
  assert.deepEqual(f.calls, [['recent', 2000], ['recent', 1000], ['held', false]]);
});

test('memberFiguresOf: too old a sample, files held: read through them, now', () => {
  const f = feed(0, true);
  assert.deepEqual(memberFiguresOf(f, 5000, 2000, true), { atMs: 5000, currentBytes: 200, fullUs: 0 });
  assert.deepEqual(memberFiguresOf(f, 5000, 2000, false), { atMs: 5000, currentBytes: 200, fullUs: 9 });
  assert.equal(memberFiguresOf(undefined, 5000, 2000, true), undefined, 'no feed (not a session): read by path');
});

test("a session that joins a watched slice has its members noted at once; one adopted at sbd's start does not (a fake cgroup tree)", async (t) => {
  const fs = require('node:fs');
  const os = require('node:os');
  const path = require('node:path');
  const { SliceArbiter } = require('../../../dist/daemon/slice-arbiter.js');
  const { parseConfig } = require('../../../dist/config/load.js');
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sb-arbiter-'));
  const slice = path.join(dir, 'nbr.slice');
  t.after(() => fs.rmSync(dir, { recursive: true, force: true }));
  const member = (name, bytes) => {
    fs.mkdirSync(path.join(slice, name), { recursive: true });
    fs.writeFileSync(path.join(slice, name, 'memory.current'), `${bytes}\n`);
  };
  const total = (bytes) => fs.writeFileSync(path.join(slice, 'memory.current'), `${bytes}\n`);
  const MiB = 2 ** 20;
  member('innocent.scope', 1 * MiB);
  total(1 * MiB);
  let adopting = false;
  const quiet = { debug() {}, info() {}, warn() {}, error() {} };
  const arbiter = new SliceArbiter({
    config: parseConfig({ slices: ['nbr.slice'] }, 'test'),
    manager: /** @type {any} */ ({}),
    incidents: /** @type {any} */ ({ tell() {} }),
    brakes: /** @type {any} */ ({}),
    sessions: () => [],
    countInSlice: () => 1,
    feedOf: () => undefined,
    watchFile: () => {},
    unwatchFile: () => {},
    log: /** @type {any} */ (quiet),
    adopting: () => adopting,
  });
  const session = (name) => /** @type {any} */ ({ unit: name, slice: 'nbr.slice', cgroupDir: path.join(slice, name) });
  arbiter.watch(session('innocent.scope'));
  const feed = arbiter['feeds'].get('nbr.slice');
  t.after(() => arbiter.stop?.());
  t.after(() => feed.stop());
  assert.equal(feed.state.history.length, 1, 'the first member starts the feed, which notes it');
  await new Promise((r) => setTimeout(r, 600));
  member('innocent.scope', 179 * MiB);
  member('adopted.scope', 2 * MiB);
  total(181 * MiB);
  adopting = true;
  arbiter.watch(session('adopted.scope'));
  assert.equal(feed.state.history.length, 1, 'adopted: no note');
  adopting = false;
  member('greedy.scope', 1 * MiB);
  total(182 * MiB);
  arbiter.watch(session('greedy.scope'));
  assert.equal(feed.state.history.length, 2, 'joined: noted');
  assert.deepEqual(feed.state.history[1].members, { 'innocent.scope': 179 * MiB, 'adopted.scope': 2 * MiB, 'greedy.scope': 1 * MiB });
});
