// @ts-check
'use strict';
// Issue 13: a tail resumes at its offset, takes whole lines only, notices truncation, caps a flood.
const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { readAppended } = require('../../../dist/monitor/tail-read.js');

const file = (t) => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sb-tail-'));
  t.after(() => fs.rmSync(dir, { recursive: true, force: true }));
  return path.join(dir, 'build.log');
};

test('whole lines only; a line being written waits for its newline; the next look resumes at the offset', (t) => {
  const f = file(t);
  fs.writeFileSync(f, 'one\ntwo\nthr');
  const a = readAppended(f, 0, 1 << 20);
  assert.deepEqual(a.lines, ['one', 'two']);
  assert.equal(a.offset, 8);
  fs.appendFileSync(f, 'ee\r\nfour\n');
  const b = readAppended(f, a.offset, 1 << 20);
  assert.deepEqual(b.lines, ['three', 'four']);
  assert.deepEqual(readAppended(f, b.offset, 1 << 20).lines, [], 'nothing new');
});

test('a file that got shorter was truncated or rotated: read from its start, said', (t) => {
  const f = file(t);
  fs.writeFileSync(f, 'a long first life\nof this log\n');
  const a = readAppended(f, 0, 1 << 20);
  fs.writeFileSync(f, 'new\n');
  const b = readAppended(f, a.offset, 1 << 20);
  assert.equal(b.restarted, true);
  assert.deepEqual(b.lines, ['new']);
});

test('a flood beyond the cap: the newest whole lines are read, the rest counted', (t) => {
  const f = file(t);
  const lines = Array.from({ length: 10_000 }, (_, i) => `line ${i}`);
  fs.writeFileSync(f, `${lines.join('\n')}\n`);
  const total = fs.statSync(f).size;
  const r = readAppended(f, 0, 1000);
  assert.ok(r.lines.length > 0 && r.lines.length < 200);
  assert.equal(r.lines.at(-1), 'line 9999');
  assert.match(r.lines[0] ?? '', /^line \d+$/, 'no partial line at the start');
  assert.equal(r.skippedBytes + Buffer.byteLength(`${r.lines.join('\n')}\n`), total, 'every byte either read or counted');
  assert.equal(r.offset, total);
});

test('a missing file is said, and the offset kept', (t) => {
  assert.deepEqual(readAppended(path.join(path.dirname(file(t)), 'nope.log'), 42, 1000), { lines: [], offset: 42, skippedBytes: 0, restarted: false, missing: true });
});
