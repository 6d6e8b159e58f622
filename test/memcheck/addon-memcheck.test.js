// @ts-check
'use strict';
// The addon's own tests, once more under AddressSanitizer and valgrind (scripts/valgrind-native.js).
const test = require('node:test');
const assert = require('node:assert/strict');
const path = require('node:path');
const { spawnSync } = require('node:child_process');

test('the addon tests show no invalid access and no definite leak under ASan and valgrind', { timeout: 900_000 }, () => {
  const r = spawnSync(process.execPath, [path.resolve(__dirname, '../../scripts/valgrind-native.js')], { encoding: 'utf8' });
  process.stdout.write(r.stdout.split('\n').map((l) => `# ${l}`).join('\n') + '\n');
  assert.equal(r.status, 0, `${r.stdout}\n${r.stderr}`);
});
