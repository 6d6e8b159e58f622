// @ts-check
'use strict';
// The journal's native protocol, byte for byte (systemd.io/JOURNAL_NATIVE_PROTOCOL): KEY=value
// lines, the binary-safe form for a value with a newline, and the field names journald keeps.
const test = require('node:test');
const assert = require('node:assert/strict');
const { encodeEntry, fieldNameProblem, FIELD_NAME_MAX } = require('../../../dist/journal/encode.js');

test('plain values are KEY=value lines, in the order given, a key repeated as given', () => {
  const bytes = encodeEntry([['MESSAGE', 'stopped python3'], ['PRIORITY', '4'], ['PID', '12'], ['PID', '13']]);
  assert.deepEqual(bytes, Buffer.from('MESSAGE=stopped python3\nPRIORITY=4\nPID=12\nPID=13\n', 'ascii'));
});

test('a value with a newline: KEY, newline, its length as 64-bit little-endian, the value, newline', () => {
  // The protocol document's own example: FOO with BAR, here with a newline inside.
  const bytes = encodeEntry([['A', 'x'], ['FOO', 'BA\nR'], ['B', 'y']]);
  const expected = Buffer.concat([
    Buffer.from('A=x\n'),
    Buffer.from('FOO\n'),
    Buffer.from([4, 0, 0, 0, 0, 0, 0, 0]),
    Buffer.from('BA\nR'),
    Buffer.from('\n'),
    Buffer.from('B=y\n'),
  ]);
  assert.deepEqual(bytes, expected);
});

test('the length counts bytes, not characters, and takes all 8 bytes for a large value', () => {
  const big = 'é\n'.repeat(70_000); // 3 bytes a repeat: 210,000 bytes = 0x033450
  const bytes = encodeEntry([['M', big]]);
  assert.deepEqual(bytes.subarray(0, 2), Buffer.from('M\n'));
  assert.deepEqual(bytes.subarray(2, 10), Buffer.from([0x50, 0x34, 0x03, 0, 0, 0, 0, 0]));
  assert.equal(bytes.readBigUInt64LE(2), 210_000n);
  assert.equal(bytes.length, 2 + 8 + 210_000 + 1);
  assert.equal(bytes.subarray(10, 10 + 210_000).toString('utf8'), big);
  assert.equal(bytes.at(-1), 0x0a);
});

test('a Buffer value is sent as its bytes (NUL included), UTF-8 text as UTF-8', () => {
  assert.deepEqual(encodeEntry([['BLOB', Buffer.from([0, 1, 255])]]), Buffer.from([...Buffer.from('BLOB='), 0, 1, 255, 0x0a]));
  assert.deepEqual(encodeEntry([['MESSAGE', 'brake 64 MiB → 96 MiB']]), Buffer.from('MESSAGE=brake 64 MiB → 96 MiB\n', 'utf8'));
  assert.deepEqual(encodeEntry([['EMPTY', '']]), Buffer.from('EMPTY=\n'));
});

test('field names: uppercase A-Z, 0-9 and _, not starting with _ or a digit, at most 64 characters', () => {
  for (const good of ['MESSAGE', 'RSS_BYTES', 'A', 'X9', 'A'.repeat(FIELD_NAME_MAX)]) assert.equal(fieldNameProblem(good), undefined, good);
  assert.equal(FIELD_NAME_MAX, 64);
  assert.match(fieldNameProblem('') ?? '', /empty/);
  assert.match(fieldNameProblem('_PID') ?? '', /starts with "_", which only the journal itself may send/);
  assert.match(fieldNameProblem('9LIVES') ?? '', /starts with a digit/);
  assert.match(fieldNameProblem('A'.repeat(65)) ?? '', /longer than 64 characters/);
  for (const bad of ['rss_bytes', 'RSS-BYTES', 'A=B', 'A\nB', 'ÄB', 'A B']) assert.match(fieldNameProblem(bad) ?? '', /a character other than A-Z, 0-9 and "_"/, bad);
});

test('a bad field name fails the whole entry, naming it', () => {
  assert.throws(() => encodeEntry([['MESSAGE', 'x'], ['_UID', '0']]), { name: 'RangeError', message: /journal entry: the field name _UID starts with "_"/ });
  assert.throws(() => encodeEntry([['session', 'x']]), { name: 'RangeError', message: /"session"/ });
});

test('property: any fields, text or bytes, with or without newlines, encode as the protocol spells them field by field', () => {
  const fc = require('fast-check');
  /** The protocol, one field at a time (systemd.io/JOURNAL_NATIVE_PROTOCOL). */
  const reference = (fields) => Buffer.concat(fields.flatMap(([name, raw]) => {
    const value = typeof raw === 'string' ? Buffer.from(raw, 'utf8') : raw;
    if (!value.includes(0x0a)) return [Buffer.from(`${name}=`), value, Buffer.from('\n')];
    const length = Buffer.alloc(8);
    length.writeBigUInt64LE(BigInt(value.length));
    return [Buffer.from(`${name}\n`), length, value, Buffer.from('\n')];
  }));
  const name = fc.stringMatching(/^[A-Z][A-Z0-9_]{0,20}$/);
  const value = fc.oneof(fc.string(), fc.string().map((s) => `${s}\n${s}`), fc.string({ unit: 'grapheme' }), fc.uint8Array().map((a) => Buffer.from(a)));
  fc.assert(fc.property(fc.array(fc.tuple(name, value), { maxLength: 12 }), (fields) => {
    assert.deepEqual(encodeEntry(fields), reference(fields));
  }), { numRuns: 300 });
});

test('a bad name is refused the same after good ones were remembered, and a good name after a bad one', () => {
  for (let i = 0; i < 3; i++) assert.deepEqual(encodeEntry([['GOOD', 'x']]), Buffer.from('GOOD=x\n'));
  assert.throws(() => encodeEntry([['GOOD', 'x'], ['bad', 'y']]), { name: 'RangeError', message: /journal entry: the field name "bad" has a character other than A-Z/ });
  assert.throws(() => encodeEntry([['GOOD', 'x\ny'], ['bad', 'y']]), { name: 'RangeError', message: /"bad"/ }, 'the binary-safe form checks names too');
  assert.deepEqual(encodeEntry([['GOOD', 'x']]), Buffer.from('GOOD=x\n'));
});
