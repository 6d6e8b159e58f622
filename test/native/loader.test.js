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

test('an installed copy (in node_modules/) that cannot load its addon says how npm builds it again', () => {
  const pkg = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'sb-loader-')), 'node_modules', 'sessionbrake');
  fs.mkdirSync(path.join(pkg, 'dist'), { recursive: true });
  fs.copyFileSync(native, path.join(pkg, 'dist/native.js'));
  const env = { ...process.env };
  delete env.SESSIONBRAKE_ADDON;
  const r = spawnSync(process.execPath, ['-e', `require(${JSON.stringify(path.join(pkg, 'dist/native.js'))})`], { encoding: 'utf8', env });
  assert.notEqual(r.status, 0);
  assert.match(r.stderr, new RegExp(`cannot load the native addon ${pkg}/build/Release/sessionbrake\\.node \\(Cannot find module`));
  assert.match(r.stderr, /Build it again with `npm rebuild -g sessionbrake` \(it needs a C\+\+ compiler, make, python3 and Node's headers\)/);
});

test('addonBuiltBy: which build made an addon, from what each build leaves in build/', () => {
  const { addonBuiltBy, addonPath } = require(native);
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sb-built-by-'));
  const at = (marker) => {
    const build = path.join(dir, marker ?? 'none', 'build');
    fs.mkdirSync(path.join(build, 'Release'), { recursive: true });
    if (marker) fs.writeFileSync(path.join(build, marker), '');
    return path.join(build, 'Release', 'sessionbrake.node');
  };
  assert.equal(addonBuiltBy(at('CMakeCache.txt')), 'cmake-js');
  assert.equal(addonBuiltBy(at('config.gypi')), 'node-gyp');
  assert.equal(addonBuiltBy(at(undefined)), 'unknown');
  if (!process.env.SESSIONBRAKE_ADDON) assert.notEqual(addonBuiltBy(addonPath), 'unknown', 'this checkout\'s own build (npm ci) is told');
});
