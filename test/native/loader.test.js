// @ts-check
'use strict';
const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { spawnSync } = require('node:child_process');

const native = path.resolve(__dirname, '../../dist/native.js');
const load = (addon) =>
  spawnSync(process.execPath, ['-e', `require(${JSON.stringify(native)})`], {
    encoding: 'utf8',
    env: { ...process.env, SESSIONBRAKE_ADDON: addon },
  });

test('a missing build fails with one message naming the file and the rebuild command', () => {
  const missing = '/nonexistent/build/Release/sessionbrake.node';
  const r = load(missing);
  assert.notEqual(r.status, 0);
  assert.match(r.stderr, new RegExp(`sessionbrake: cannot load the native addon ${missing} \\(Cannot find module`));
  assert.match(r.stderr, /Rebuild it with `npm run build:native` in \//);
});

test('a file that is not a loadable addon fails the same way, with the dynamic loader\'s reason', () => {
  const fake = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'sb-loader-')), 'sessionbrake.node');
  fs.writeFileSync(fake, 'not an ELF file, but long enough for the loader to read its header'.repeat(4));
  const r = load(fake);
  assert.notEqual(r.status, 0);
  assert.match(r.stderr, new RegExp(`cannot load the native addon ${fake} \\(.*invalid ELF header`));
});
