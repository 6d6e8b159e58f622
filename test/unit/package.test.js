// @ts-check
'use strict';
// package.json names only files that exist after the build (issue 12, fault 9: `main` named
// dist/index.js, which never existed; sessionbrake is two commands, not a library).
const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const path = require('node:path');

const root = path.resolve(__dirname, '..', '..');
const pkg = JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8'));

test('main, when given, and every bin exist after the build', () => {
  const named = [...(pkg.main !== undefined ? [pkg.main] : []), ...Object.values(pkg.bin ?? {})];
  assert.ok(named.length > 0);
  for (const file of named) assert.ok(fs.existsSync(path.join(root, file)), `package.json names ${file}, which does not exist`);
});

test('every bin starts with a node shebang (npm links them as commands)', () => {
  for (const file of Object.values(pkg.bin ?? {})) {
    assert.match(fs.readFileSync(path.join(root, file), 'utf8').split('\n')[0] ?? '', /^#!\/usr\/bin\/env node$/, file);
  }
});
