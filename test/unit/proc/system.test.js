// @ts-check
'use strict';
// Page size and clock ticks come from the system (the ELF auxiliary vector of sbd's own process),
// not from constants: arm64 kernels run with 16K or 64K pages (issue 12, fault 9).
const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const { parseAuxv, systemPageSize, systemClockTicks } = require('../../../dist/proc/system.js');

/** An auxv image: 8-byte little-endian key/value pairs ending with AT_NULL. */
function auxv(pairs) {
  const b = Buffer.alloc((pairs.length + 1) * 16);
  pairs.forEach(([k, v], i) => {
    b.writeBigUInt64LE(BigInt(k), i * 16);
    b.writeBigUInt64LE(BigInt(v), i * 16 + 8);
  });
  return b;
}

test('auxv: AT_PAGESZ (6) and AT_CLKTCK (17) are read; other entries are skipped', () => {
  assert.deepEqual(parseAuxv(auxv([[33, 0x7fff0000], [6, 65536], [17, 100], [25, 0x7ffe0000]]), 'auxv'), { pageSize: 65536, clockTicks: 100 });
  assert.deepEqual(parseAuxv(auxv([[6, 16384], [17, 250]]), 'auxv'), { pageSize: 16384, clockTicks: 250 });
});

test('auxv: a missing entry or a cut-off image is an error naming the file', () => {
  assert.throws(() => parseAuxv(auxv([[17, 100]]), '/proc/self/auxv'), /\/proc\/self\/auxv.*AT_PAGESZ/);
  assert.throws(() => parseAuxv(auxv([[6, 4096], [17, 100]]).subarray(0, 20), '/proc/self/auxv'), /\/proc\/self\/auxv/);
  assert.throws(() => parseAuxv(auxv([[6, 3000], [17, 100]]), 'f'), /page size 3000/);
});

test('the system\'s own figures: this process\'s auxv', () => {
  const mine = parseAuxv(fs.readFileSync('/proc/self/auxv'), '/proc/self/auxv');
  assert.equal(systemPageSize(), mine.pageSize);
  assert.equal(systemClockTicks(), mine.clockTicks);
});
