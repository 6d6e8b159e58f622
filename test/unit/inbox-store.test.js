// @ts-check
'use strict';
// Issue 13: a session's inbox: ids that only grow, --since reads what is new, a torn line is
// skipped, and it stays bounded.
const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { InboxWriter, appendNotice, readInbox, entriesSince, MAX_KEPT } = require('../../dist/inbox/store.js');

const dir = (t) => {
  const d = fs.mkdtempSync(path.join(os.tmpdir(), 'sb-inbox-'));
  t.after(() => fs.rmSync(d, { recursive: true, force: true }));
  return d;
};
const n = (text) => ({ atMs: 1, from: 'sbd', kind: 'stopped', text });

test('ids grow; --since gives what is new', (t) => {
  const d = dir(t);
  assert.equal(appendNotice(d, 'fix', n('a')).id, 1);
  assert.equal(appendNotice(d, 'fix', n('b')).id, 2);
  assert.equal(appendNotice(d, 'other', n('x')).id, 1, 'per session');
  assert.deepEqual(entriesSince(readInbox(d, 'fix'), 1).map((e) => e.text), ['b']);
  assert.deepEqual(readInbox(d, 'nobody'), []);
});

test('a torn last line (a crash mid-write) is skipped, and the next id follows the last whole one', (t) => {
  const d = dir(t);
  appendNotice(d, 'fix', n('a'));
  fs.appendFileSync(path.join(d, 'fix.jsonl'), '{"id":2,"atMs":1,"fr');
  assert.deepEqual(readInbox(d, 'fix').map((e) => e.id), [1]);
  assert.equal(appendNotice(d, 'fix', n('after')).id, 2);
  assert.deepEqual(readInbox(d, 'fix').map((e) => e.text), ['a', 'after'], 'the notice after a torn line is whole');
});

test('bounded: compacted to the newest MAX_KEPT, ids still growing', (t) => {
  const d = dir(t);
  for (let i = 0; i < 2 * MAX_KEPT + 1; i++) appendNotice(d, 'fix', n(`n${i}`));
  const all = readInbox(d, 'fix');
  assert.equal(all.length, MAX_KEPT);
  assert.equal(all.at(-1)?.id, 2 * MAX_KEPT + 1);
  assert.equal(appendNotice(d, 'fix', n('next')).id, 2 * MAX_KEPT + 2);
});

test('a session name that is not one (a path) is refused, nothing written outside the inbox', (t) => {
  const d = dir(t);
  assert.throws(() => appendNotice(d, '../escape', n('x')), /"\.\.\/escape" is not a session name/);
  assert.throws(() => readInbox(d, '..'), /not a session name/);
  assert.deepEqual(fs.readdirSync(path.dirname(d)).filter((f) => f === 'escape.jsonl'), []);
});

test('InboxWriter: ids keep growing when someone else appended, compacted or deleted the file between its appends', (t) => {
  const d = dir(t);
  const w = new InboxWriter(d);
  assert.equal(w.append('fix', n('a')).id, 1);
  assert.equal(w.append('fix', n('b')).id, 2);
  assert.equal(appendNotice(d, 'fix', n('by another writer')).id, 3);
  assert.equal(w.append('fix', n('c')).id, 4, 'the other writer\'s append is seen');
  // a torn line written by someone else: the next notice starts on a line of its own
  fs.appendFileSync(path.join(d, 'fix.jsonl'), '{"id":5,"atMs":1,"fr');
  assert.equal(w.append('fix', n('after torn')).id, 5);
  assert.deepEqual(readInbox(d, 'fix').map((e) => e.text), ['a', 'b', 'by another writer', 'c', 'after torn']);
  fs.rmSync(path.join(d, 'fix.jsonl'));
  assert.equal(w.append('fix', n('fresh')).id, 1, 'a deleted inbox starts again');
});

test('InboxWriter: compaction at twice MAX_KEPT keeps the newest, and later appends count from there', (t) => {
  const d = dir(t);
  const w = new InboxWriter(d);
  for (let i = 0; i < 2 * MAX_KEPT + 1; i++) w.append('fix', n(`n${i}`));
  const kept = readInbox(d, 'fix');
  assert.equal(kept.length, MAX_KEPT);
  assert.equal(kept.at(-1)?.id, 2 * MAX_KEPT + 1);
  assert.equal(w.append('fix', n('next')).id, 2 * MAX_KEPT + 2);
  assert.equal(readInbox(d, 'fix').length, MAX_KEPT + 1);
});

test('a notice that carries `through` is on disk (fdatasync of the inbox file) before append returns; an incident\'s is not synced', (t) => {
  const d = dir(t);
  const synced = [];
  const real = fs.fdatasyncSync;
  fs.fdatasyncSync = (fd) => { synced.push(fs.readFileSync(`/proc/self/fd/${fd}`, 'utf8')); real(fd); };
  t.after(() => { fs.fdatasyncSync = real; });
  const w = new InboxWriter(d);
  w.append('fix', n('an incident'));
  assert.deepEqual(synced, [], 'no sync for a notice no offset depends on');
  w.append('fix', { atMs: 2, from: 'm1', kind: 'match', text: 'st: 1 new line matched', lines: ['done'], monitor: 'id1', through: 42 });
  assert.equal(synced.length, 1, 'one sync, for the notice whose `through` the monitor\'s record saves next');
  assert.match(synced[0], /"through":42/, 'the synced file already holds the notice');
  assert.deepEqual(readInbox(d, 'fix').map((e) => e.id), [1, 2]);
  assert.equal(fs.statSync(path.join(d, 'fix.jsonl')).mode & 0o777, 0o600);
});
