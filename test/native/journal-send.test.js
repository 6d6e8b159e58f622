// @ts-check
'use strict';
// The addon's journal send (native/journal_send.cc) against a datagram socket of our own: the
// entry's exact bytes as one datagram; too big for one, the same bytes in a sealed memfd passed
// with SCM_RIGHTS (as journald takes it); errors naming the syscall, the errno and the socket.
const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { journalSend, JOURNAL_SOCKET } = require('../../dist/native.js');
const { encodeEntry } = require('../../dist/journal/encode.js');
const { journalListener, decodeEntry } = require('../support/journal-listener.js');

const socketIn = (t) => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sb-journal-'));
  t.after(() => fs.rmSync(dir, { recursive: true, force: true }));
  return path.join(dir, 'socket');
};
/** F_SEAL_SEAL | F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE */
const FULLY_SEALED = 1 | 2 | 4 | 8;

test('the journal\'s own socket is the default', () => {
  assert.equal(JOURNAL_SOCKET, '/run/systemd/journal/socket');
});

test('an entry arrives as one datagram, byte for byte, with no fd', async (t) => {
  const sock = socketIn(t);
  const l = journalListener(sock);
  t.after(l.close);
  await l.ready;
  const entry = encodeEntry([['MESSAGE', 'stopped python3'], ['MESSAGE_ID', '6442e5c022af415d9e7032b8ff0e0980'], ['PRIORITY', '4'], ['RSS_BYTES', '325058560']]);
  assert.equal(journalSend(entry, sock), 'datagram');
  const { bytes, report } = await l.received;
  assert.deepEqual(report, { payloadBytes: entry.length, fds: 0, truncated: false });
  assert.deepEqual(bytes, entry);
});

test('a value with newlines goes in the binary-safe form and arrives intact', async (t) => {
  const sock = socketIn(t);
  const l = journalListener(sock);
  t.after(l.close);
  await l.ready;
  const members = 'a.scope current_bytes=1\nb.scope current_bytes=2';
  const entry = encodeEntry([['MESSAGE', 'sessions.slice stands still'], ['MEMBERS', members], ['NUL', Buffer.from([0, 10, 0])]]);
  assert.equal(journalSend(entry, sock), 'datagram');
  const { bytes } = await l.received;
  assert.deepEqual(bytes, entry);
  assert.deepEqual(decodeEntry(bytes).map(([k, v]) => [k, v.toString('latin1')]), [['MESSAGE', 'sessions.slice stands still'], ['MEMBERS', members], ['NUL', '\0\n\0']]);
});

test('an entry over the socket\'s largest datagram (300 KiB) arrives whole through a sealed memfd', async (t) => {
  const sock = socketIn(t);
  const l = journalListener(sock);
  t.after(l.close);
  await l.ready;
  const wmemDefault = Number(fs.readFileSync('/proc/sys/net/core/wmem_default', 'utf8'));
  const big = 'x'.repeat(300 * 1024);
  assert.ok(big.length > wmemDefault, `300 KiB is over a new socket's send buffer (${wmemDefault} bytes): no single datagram can carry it`);
  const entry = encodeEntry([['MESSAGE', 'big'], ['BIG', big], ['LINES', 'a\nb']]);
  assert.equal(journalSend(entry, sock), 'memfd');
  const { bytes, report } = await l.received;
  assert.equal(report.payloadBytes, 0, 'the datagram itself is empty');
  assert.equal(report.fds, 1, 'it carries exactly one fd');
  assert.equal(report.seals & FULLY_SEALED, FULLY_SEALED, `sealed against every change (seals ${report.seals})`);
  assert.equal(bytes.length, entry.length);
  assert.ok(bytes.equals(entry), 'the memfd holds the entry byte for byte');
  assert.equal(decodeEntry(bytes).find(([k]) => k === 'BIG')?.[1].length, 300 * 1024);
});

test('an abstract socket (@name) is reached as sdNotify reaches one', async () => {
  const name = `@sb-journal-test-${process.pid}-${Date.now()}`;
  const l = journalListener(name);
  await l.ready;
  const entry = encodeEntry([['MESSAGE', 'hello']]);
  assert.equal(journalSend(entry, name), 'datagram');
  assert.deepEqual((await l.received).bytes, entry);
});

test('failures name the syscall, the errno and the socket', () => {
  const nobody = path.join(os.tmpdir(), `sb-journal-nobody-${process.pid}`);
  const entry = encodeEntry([['MESSAGE', 'x']]);
  assert.throws(() => journalSend(entry, nobody), { code: 'ENOENT', syscall: 'sendmsg', path: nobody, message: new RegExp(`^sendmsg ${nobody}: .*\\(ENOENT\\)$`) });
  // too big for a datagram, and nobody there: the memfd's send fails the same way
  assert.throws(() => journalSend(Buffer.alloc(300 * 1024, 0x41), nobody), { code: 'ENOENT', syscall: 'sendmsg', path: nobody });
  assert.throws(() => journalSend(entry, 'relative/socket'), { code: 'EINVAL', syscall: 'sendmsg' });
  // @ts-expect-error a string is not an entry
  assert.throws(() => journalSend('MESSAGE=x\n', nobody), { name: 'TypeError', message: /expected a string and a Buffer/ });
});
