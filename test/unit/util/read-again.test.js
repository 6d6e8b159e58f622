// @ts-check
'use strict';
// A held fd read again from its start (src/util/read-again.ts): the whole text however long, as
// fresh as a new open, the syscall's error passed on as it is.
const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { readAgain } = require('../../../dist/util/read-again.js');

test('read again: the whole file from offset 0, longer ones too, and what was written since', (t) => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sb-readagain-'));
  t.after(() => fs.rmSync(dir, { recursive: true, force: true }));
  const file = path.join(dir, 'f');
  fs.writeFileSync(file, 'some 1\n');
  const fd = fs.openSync(file, 'r');
  t.after(() => fs.closeSync(fd));
  assert.equal(readAgain(fd, 'latin1'), 'some 1\n');
  assert.equal(readAgain(fd, 'latin1'), 'some 1\n', 'the fd\'s position does not move: read again from the start');
  fs.writeFileSync(file, Buffer.alloc(8192, 0x61));
  assert.equal(readAgain(fd, 'latin1').length, 8192, 'exactly the starting buffer\'s length (before any read grew it): read to the end, nothing more');
  const long = `${'x'.repeat(40_000)}\nend\n`; // five times the starting buffer
  fs.writeFileSync(file, long);
  assert.equal(readAgain(fd, 'latin1'), long);
  fs.writeFileSync(file, 'short\n');
  assert.equal(readAgain(fd, 'latin1'), 'short\n', 'after a long read, a short one is not padded with the old text');
  fs.writeFileSync(file, 'comm (café)\n');
  assert.equal(readAgain(fd, 'utf8'), 'comm (café)\n');
});

test('read again: a closed fd is the syscall\'s own error', () => {
  const fd = fs.openSync(__filename, 'r');
  fs.closeSync(fd);
  assert.throws(() => readAgain(fd, 'latin1'), { code: 'EBADF', syscall: 'read' });
});
