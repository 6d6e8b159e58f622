// @ts-check
'use strict';
// Issue 13: the file monitor on real files and the real addon's FileWatch (the file and its
// directory's entries, as sbd wires them): a file that does not exist yet is told when it
// appears, a change with its last lines, changes within the span as one notice, notifyOn
// deciding which changes are told, a rename over it, its disappearance, its directory's; after a
// restart what changed meanwhile is told once. And the pure decision (monitor/file-state.ts).
const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const path = require('node:path');
const { fakeHost, until, sleepReal } = require('./fake-host');
const { fileChange, lastLinesOf, lookOf } = require('../../../dist/monitor/file-state.js');
const { lookAt } = require('../../../dist/monitor/runners/file.js');

const SPAN = 0.1; // coalesceSeconds in these tests: short, and still one notice for a burst

test('a file that does not exist yet: appeared, changed (with its last lines), disappeared; each told once', async (t) => {
  const h = fakeHost(t, { realWatch: true });
  const file = path.join(h.dir, 'result.txt');
  const a = await h.m.start('fix', { type: 'file', path: file, coalesceSeconds: SPAN, lastLines: 2, label: 'result' });
  assert.equal(a.answer, 'created');
  assert.deepEqual(h.watched.get(h.dir), { entries: true }, 'its directory is watched for its entries');
  assert.equal(h.record(a.id)?.fileState?.exists, false);
  fs.writeFileSync(file, 'one\n');
  await until(() => h.notices.length === 1, 'appeared');
  assert.deepEqual([h.notices[0].kind, h.notices[0].text, h.notices[0].lines], ['appeared', 'result: appeared (4 bytes)', ['one']]);
  assert.ok(h.watched.has(file), 'the file itself is watched once it exists');
  fs.appendFileSync(file, 'two\n');
  fs.appendFileSync(file, 'three\n');
  await until(() => h.notices.length === 2, 'changed');
  await sleepReal(SPAN * 3000);
  assert.equal(h.notices.length, 2, 'two writes within the span: one notice');
  assert.deepEqual([h.notices[1].kind, h.notices[1].text, h.notices[1].lines], ['changed', 'result: changed: 4 bytes → 14 bytes', ['two', 'three']]);
  fs.unlinkSync(file);
  await until(() => h.notices.length === 3, 'disappeared');
  assert.deepEqual([h.notices[2].kind, h.notices[2].text], ['disappeared', 'result: disappeared']);
  assert.equal(h.record(a.id)?.fileState?.exists, false);
  assert.equal(h.record(a.id)?.lifecycle, 'running', 'it waits for the file to come back');
});

test('notifyOn: a change is told only when the matching lines among the last ones change, with those lines', async (t) => {
  const h = fakeHost(t, { realWatch: true });
  const file = path.join(h.dir, 'status');
  fs.writeFileSync(file, 'starting\n');
  const a = await h.m.start('fix', { type: 'file', path: file, coalesceSeconds: SPAN, notifyOn: ['ERROR'] });
  fs.appendFileSync(file, 'compiling\n');
  await until(() => h.record(a.id)?.ticks === 1, 'the first look');
  assert.deepEqual(h.notices, [], 'no match: not told');
  fs.appendFileSync(file, 'ERROR: disk full\n');
  await until(() => h.notices.length === 1, 'the match');
  assert.deepEqual(h.notices[0].lines, ['ERROR: disk full']);
  fs.appendFileSync(file, 'retrying\n');
  await until(() => h.record(a.id)?.ticks === 3, 'the third look');
  assert.equal(h.notices.length, 1, 'the same matching line: not told again');
});

test('a rename over it is a change even when size and lines are the same; its directory going ends the monitor', async (t) => {
  const h = fakeHost(t, { realWatch: true });
  const dir = path.join(h.dir, 'out');
  fs.mkdirSync(dir);
  const file = path.join(dir, 'config.json');
  fs.writeFileSync(file, '{"a":1}\n');
  const a = await h.m.start('fix', { type: 'file', path: file, coalesceSeconds: SPAN });
  fs.writeFileSync(`${file}.tmp`, '{"a":1}\n');
  fs.renameSync(`${file}.tmp`, file);
  await until(() => h.notices.length === 1, 'the replace');
  assert.match(h.notices[0].text, /: changed \(replaced\): 8 bytes$/);
  fs.appendFileSync(file, '{"b":2}\n');
  await until(() => h.notices.length === 2, 'a write to the new file');
  assert.equal(h.notices[1].kind, 'changed', 'the new inode is watched');
  fs.rmSync(dir, { recursive: true });
  await until(() => h.record(a.id)?.lifecycle === 'gone', 'the directory gone');
  assert.equal(h.record(a.id)?.reason, `its directory ${dir} went away: no longer watched`);
  assert.ok(h.notices.some((n) => n.kind === 'gone'));
});

test('two monitors in one directory share its watch; a stop releases only its own', async (t) => {
  const h = fakeHost(t, { realWatch: true });
  const a = await h.m.start('fix', { type: 'file', path: path.join(h.dir, 'a'), coalesceSeconds: SPAN });
  const b = await h.m.start('fix', { type: 'file', path: path.join(h.dir, 'b'), coalesceSeconds: SPAN });
  await h.m.stop('fix', a.handle);
  assert.ok(h.watched.has(h.dir), 'still watched for b');
  fs.writeFileSync(path.join(h.dir, 'b'), 'x');
  fs.writeFileSync(path.join(h.dir, 'a'), 'x');
  await until(() => h.notices.length >= 1, 'b appeared');
  await sleepReal(SPAN * 3000);
  assert.deepEqual(h.notices.map((n) => n.from), [b.handle], 'only b is told');
  await h.m.stop('fix', b.handle);
  assert.ok(!h.watched.has(h.dir), 'released with the last');
});

test('refused: a file whose directory does not exist, or is not a directory', async (t) => {
  const h = fakeHost(t, { realWatch: true });
  await assert.rejects(h.m.start('fix', { type: 'file', path: path.join(h.dir, 'nope', 'x') }), /the directory .*nope does not exist/);
  fs.writeFileSync(path.join(h.dir, 'plain'), '');
  await assert.rejects(h.m.start('fix', { type: 'file', path: path.join(h.dir, 'plain', 'x') }), /plain is not a directory/);
});

test('after a restart: a change made while sbd was away is told once, at once', async (t) => {
  const h = fakeHost(t, { realWatch: true });
  const file = path.join(h.dir, 'log');
  fs.writeFileSync(file, 'a\n');
  const a = await h.m.start('fix', { type: 'file', path: file, coalesceSeconds: SPAN });
  h.m.close();
  fs.appendFileSync(file, 'b\n');
  const again = fakeHost(t, { realWatch: true, dir: h.dir });
  again.m.loadAll();
  again.m.apply({ actions: [{ id: a.id, action: 'resume', why: '' }], summary: '' });
  assert.deepEqual(again.notices.map((n) => [n.kind, n.lines]), [['changed', ['a', 'b']]]);
  fs.appendFileSync(file, 'c\n');
  await until(() => again.notices.length === 2, 'watched again');
});

test('lookAt: the last lines of a big file are read from its end; a fifo is never read', (t) => {
  const h = fakeHost(t);
  const big = path.join(h.dir, 'big');
  fs.writeFileSync(big, `${'x'.repeat(100_000)}\nnext to last\nlast\n`);
  assert.deepEqual(lookAt(big, 2, []).lines, ['next to last', 'last']);
  assert.equal(lookAt(big, 2, []).state.size, 100_000 + 19);
  const fifo = path.join(h.dir, 'fifo');
  require('node:child_process').execFileSync('mkfifo', [fifo]);
  assert.deepEqual(lookAt(fifo, 5, []).lines, [], 'no blocking read of a fifo');
  assert.equal(lookAt(path.join(h.dir, 'none'), 5, []).state.exists, false);
  if (process.getuid?.() !== 0) {
    const closed = path.join(h.dir, 'closed');
    fs.writeFileSync(closed, 'secret\n', { mode: 0o000 });
    assert.deepEqual([lookAt(closed, 5, []).state.exists, lookAt(closed, 5, []).state.size, lookAt(closed, 5, []).lines], [true, 7, []], 'not readable: there, its size only');
  }
});

test('fileChange (pure): appear, disappear, change, no change, notifyOn, maxLines', () => {
  const look = (size, lines) => lookOf({ size, lines }, []);
  const none = lookOf(undefined, []);
  assert.equal(fileChange(undefined, none, [], 10), undefined, 'still not there');
  assert.deepEqual(fileChange(none.state, look(3, ['ab']), [], 10), { kind: 'appeared', text: 'appeared (3 bytes)', lines: ['ab'] });
  assert.deepEqual(fileChange(look(3, ['ab']).state, none, [], 10), { kind: 'disappeared', text: 'disappeared', lines: [] });
  assert.equal(fileChange(look(3, ['ab']).state, look(3, ['ab']), [], 10), undefined, 'the same');
  assert.deepEqual(fileChange(look(3, ['ab']).state, look(3, ['ba']), [], 10), { kind: 'changed', text: 'changed: 3 bytes', lines: ['ba'] });
  assert.deepEqual(fileChange(look(3, ['ab']).state, look(9, ['ab', 'c', 'd']), [], 2)?.lines, ['c', 'd'], 'at most maxLines');
  const m = [/ERR/];
  const withErr = lookOf({ size: 9, lines: ['ok', 'ERR 1'] }, m);
  assert.deepEqual(fileChange(lookOf({ size: 3, lines: ['ok'] }, m).state, withErr, m, 10)?.lines, ['ERR 1']);
  assert.equal(fileChange(withErr.state, lookOf({ size: 12, lines: ['ERR 1', 'ok'] }, m), m, 10), undefined, 'the same matching lines');
  assert.equal(fileChange(lookOf({ size: 3, lines: ['ok'] }, m).state, lookOf({ size: 6, lines: ['ok', 'ok'] }, m), m, 10), undefined, 'nothing matches');
  assert.deepEqual(lastLinesOf('partial\nb\nc\r\n', 5, false), ['b', 'c'], 'a read from mid-file drops its first partial line');
  assert.deepEqual(lastLinesOf('a\nb\nc', 2, true), ['b', 'c']);
  assert.deepEqual(lastLinesOf('a\n', 0, true), []);
});
