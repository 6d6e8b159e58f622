// @ts-check
'use strict';
// Issue 14: the install step of the packed tarball builds the addon with node-gyp when cmake-js
// (a devDependency) is absent, and says what is missing before node-gyp fails on it. Run here
// from a scratch copy of the install step, where no cmake-js resolves.
const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { spawnSync } = require('node:child_process');

const root = path.resolve(__dirname, '../../..');

function scratch(t) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sb-install-native-'));
  t.after(() => fs.rmSync(dir, { recursive: true, force: true }));
  fs.mkdirSync(path.join(dir, 'scripts'));
  for (const f of ['scripts/install-native.js', 'scripts/node-dir.js', 'binding.gyp']) fs.copyFileSync(path.join(root, f), path.join(dir, f));
  return dir;
}

/** The environment npm gives an install script, less what the case takes away. */
function env(extra) {
  const e = { ...process.env, npm_config_node_gyp: require.resolve('node-gyp/bin/node-gyp.js', { paths: [root] }) };
  delete e.CXX;
  delete e.PYTHON;
  delete e.npm_config_python;
  return { ...e, ...extra };
}

test('nothing to build with: every missing piece named, with what to install, and exit 1 before any build', (t) => {
  const dir = scratch(t);
  const r = spawnSync(process.execPath, [path.join(dir, 'scripts/install-native.js')], {
    cwd: dir, encoding: 'utf8', env: env({ PATH: '/nonexistent', npm_config_nodedir: '/nonexistent' }),
  });
  assert.equal(r.status, 1, r.stdout + r.stderr);
  assert.match(r.stderr, /^sessionbrake: cannot build the native addon: missing$/m);
  assert.match(r.stderr, /^ {2}- a C\+\+ compiler \(no c\+\+ or g\+\+ on PATH\): install g\+\+ \(Debian: apt-get install g\+\+\)$/m);
  assert.match(r.stderr, /^ {2}- make \(no make on PATH\)/m);
  assert.match(r.stderr, /^ {2}- python3, which node-gyp runs \(python3 is not found\)/m);
  assert.match(r.stderr, /^ {2}- Node's headers \(include\/node\/ with common\.gypi and node_api\.h, for Node v[\d.]+\): nodedir is \/nonexistent, which has no include\/node\/common\.gypi: install the headers/m);
  assert.equal(fs.existsSync(path.join(dir, 'build')), false, 'no build started');
});

test('only the headers missing: only they are named; CXX, when set, is the compiler looked for', (t) => {
  const dir = scratch(t);
  const r = spawnSync(process.execPath, [path.join(dir, 'scripts/install-native.js')], {
    cwd: dir, encoding: 'utf8', env: env({ npm_config_nodedir: '/nonexistent', CXX: 'no-such-cxx -O2' }),
  });
  assert.equal(r.status, 1, r.stdout + r.stderr);
  const missing = r.stderr.split('\n').filter((l) => l.startsWith('  - '));
  assert.equal(missing.length, 2, r.stderr);
  assert.match(missing[0] ?? '', /^ {2}- a C\+\+ compiler \(CXX=no-such-cxx is not found\)/);
  assert.match(missing[1] ?? '', /^ {2}- Node's headers/);
});

test('no node-gyp where npm_config_node_gyp says: named, with how to run the step through npm', (t) => {
  const dir = scratch(t);
  const r = spawnSync(process.execPath, [path.join(dir, 'scripts/install-native.js')], {
    cwd: dir, encoding: 'utf8', env: { ...env({}), npm_config_node_gyp: '/nonexistent/node-gyp.js' },
  });
  assert.equal(r.status, 1);
  assert.match(r.stderr, /^ {2}- node-gyp \(npm carries it: run this through npm, e\.g\. npm rebuild sessionbrake; \/nonexistent\/node-gyp\.js does not exist\)$/m);
});
