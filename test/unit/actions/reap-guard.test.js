// @ts-check
'use strict';
// Issue 12, fault 5: sbctl reap never signals its caller or the caller's ancestors, and refuses
// `/` and the home directory. The pure parts: the chain of parents, the split, the refusal.
const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { ancestorChain, parentPid, ownAncestors } = require('../../../dist/proc/ancestors.js');
const { spareAncestors } = require('../../../dist/actions/reap.js');
const { checkoutRefusal } = require('../../../dist/cli/reap.js');

const parents = (/** @type {Record<number, number>} */ map) => (/** @type {number} */ pid) => map[pid];

test('ancestorChain: parent first, up to and with pid 1', () => {
  assert.deepEqual(ancestorChain(500, parents({ 500: 400, 400: 300, 300: 1, 1: 0 })), [400, 300, 1]);
});

test('ancestorChain: a gone parent ends the chain; a cycle in bad input ends it too', () => {
  assert.deepEqual(ancestorChain(500, parents({ 500: 400 })), [400]);
  assert.deepEqual(ancestorChain(500, parents({ 500: 400, 400: 500 })), [400]);
  assert.deepEqual(ancestorChain(500, parents({ 500: 400, 400: 400 })), [400]);
  assert.deepEqual(ancestorChain(1, parents({ 1: 0 })), []);
});

test('ownAncestors: this process\'s parent first, pid 1 last (read from /proc)', () => {
  const chain = ownAncestors();
  assert.equal(chain[0], process.ppid);
  assert.equal(chain[chain.length - 1], 1);
});

test('parentPid reads a fake /proc; undefined for a gone process', () => {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'proc-'));
  fs.mkdirSync(path.join(root, '42'));
  fs.writeFileSync(path.join(root, '42', 'stat'), '42 (ba) (sh) S 7 42 42 0 -1 4194560 1 0 0 0 1 1 0 0 20 0 1 0 100 1000 10 1 1 1 0 0 0 0 0 0 0 0 0 17 1 0 0 0 0 0');
  assert.equal(parentPid(42, root), 7);
  assert.equal(parentPid(43, root), undefined);
});

const proc = (/** @type {number} */ pid) => ({ pid, ppid: 1, comm: `p${pid}`, uid: 1000, rssBytes: 0, cpuTicks: 0, startTicks: 0, argv: [] });

test('spareAncestors: the caller and its ancestors are spared, with why; the rest are targets', () => {
  const out = spareAncestors([proc(10), proc(20), proc(30), proc(40)], [20, 30, 1]);
  assert.deepEqual(out.targets.map((p) => p.pid), [10, 40]);
  assert.deepEqual(out.spared.map((s) => [s.proc.pid, s.why]), [[20, "sbctl's caller"], [30, "an ancestor of sbctl's caller"]]);
});

test('checkoutRefusal: /, the home directory, a directory holding it; a checkout is fine', () => {
  const homes = ['/home/tester'];
  assert.match(checkoutRefusal('/', homes) ?? '', /root directory/);
  assert.match(checkoutRefusal('/home/tester', homes) ?? '', /your home directory/);
  assert.match(checkoutRefusal('/home', homes) ?? '', /holds your home directory \/home\/tester/);
  assert.equal(checkoutRefusal('/home/tester/src/ck', homes), undefined);
  assert.equal(checkoutRefusal('/home/test', homes), undefined, 'a prefix of the name is not a parent');
  assert.equal(checkoutRefusal('/tmp/ck', homes), undefined);
});
