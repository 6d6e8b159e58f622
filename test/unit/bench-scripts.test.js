// @ts-check
'use strict';
// The benchmarks run only on demand (they take the guest for many minutes): this keeps them from
// rotting between runs. Every script parses, and the statistics they print are right.
const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const path = require('node:path');
const { spawnSync } = require('node:child_process');

const bench = path.resolve(__dirname, '../../bench');
const files = (dir) => fs.readdirSync(dir).map((f) => path.join(dir, f));

test('bench: every shell script and every JavaScript file parses', () => {
  for (const f of [...files(bench), ...files(path.join(bench, 'guest'))]) {
    const r = f.endsWith('.sh') ? spawnSync('bash', ['-n', f], { encoding: 'utf8' }) : f.endsWith('.js') ? spawnSync(process.execPath, ['--check', f], { encoding: 'utf8' }) : undefined;
    if (r) assert.equal(r.status, 0, `${path.relative(bench, f)}: ${r.stderr}`);
  }
});

test('bench: spread() gives median, min and max; secs() prints them', () => {
  const { spread, secs } = require('../../bench/lib.js');
  assert.deepEqual(spread([4, 1, 3, 2, 5]), { median: 3, min: 1, max: 5 });
  assert.deepEqual(spread([2, 1]), { median: 1, min: 1, max: 2 }, 'even count: the lower middle');
  assert.equal(spread([]), undefined);
  assert.equal(secs(spread([3.71, 4.04, 3.95])), '4.0 s (3.7–4.0)');
  assert.equal(secs(undefined), '-');
});
