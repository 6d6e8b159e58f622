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

// Issue 14: `npm pack` makes a tarball that `npm install -g` installs offline with its addon
// built (test/vm/guest/58-install proves the install; these check what goes in).
const { spawnSync } = require('node:child_process');

/** npm pack's file list and bundle, without running prepare (dist/ is built already). */
function packList() {
  const r = spawnSync('npm', ['pack', '--dry-run', '--json', '--ignore-scripts'], { cwd: root, encoding: 'utf8' });
  assert.equal(r.status, 0, r.stderr);
  const [info] = JSON.parse(r.stdout);
  return { files: new Set(info.files.map((f) => f.path)), bundled: info.bundled };
}

test('the tarball: the commands, the addon\'s sources and build files, the units, the alert rules and dashboard, and the install step; no tests, no build/, no sources of dist/', { timeout: 60_000 }, () => {
  const { files } = packList();
  const native = fs.readdirSync(path.join(root, 'native'), { recursive: true }).map(String).filter((f) => /\.(cc|h)$/.test(f)).map((f) => `native/${f}`);
  for (const f of [...Object.values(pkg.bin), 'dist/native.js', 'binding.gyp', 'CMakeLists.txt', 'units/sbd.service', 'units/sessions.slice',
    'README.md', 'package.json', 'scripts/install-native.js', 'scripts/node-dir.js', 'ops/prometheus/sessionbrake.rules.yml', 'ops/grafana/sessionbrake.json', ...native]) {
    assert.ok(files.has(f), `${f} is in the tarball`);
  }
  const own = [...files].filter((f) => !f.startsWith('node_modules/'));
  for (const f of own) assert.doesNotMatch(f, /^(test|build|src|bench|dist-test)\/|\.map$|\.test\.yml$/, `${f} does not belong in the tarball`);
});

test('every runtime dependency is bundled (the tarball installs offline), with its own dependencies', { timeout: 60_000 }, () => {
  assert.equal(pkg.bundleDependencies, true, 'all of them, a dependency added later too');
  const { files, bundled } = packList();
  for (const dep of Object.keys(pkg.dependencies)) {
    assert.ok(bundled.includes(dep), `${dep} bundled`);
    assert.ok(files.has(`node_modules/${dep}/package.json`), `node_modules/${dep}/package.json in the tarball`);
  }
  assert.ok(bundled.includes('sonic-boom') && bundled.includes('xml2js'), 'the dependencies of dependencies too (pino\'s, dbus-next\'s)');
});

test('the install step needs no devDependency: a node script whose own requires ship in the tarball', () => {
  assert.equal(pkg.scripts.install, 'node scripts/install-native.js');
  const src = fs.readFileSync(path.join(root, 'scripts/install-native.js'), 'utf8');
  const relative = [...src.matchAll(/require\('(\.[^']+)'\)/g)].map((m) => path.posix.join('scripts', m[1]));
  assert.deepEqual(relative, ['scripts/node-dir.js']);
  for (const f of relative) assert.ok(pkg.files.includes(f), `${f} is in package.json's files`);
  const bare = [...src.matchAll(/require\('([^.'][^']*)'\)/g)].map((m) => m[1]);
  assert.deepEqual(bare.filter((m) => !m.startsWith('node:')), [], 'only node: built-ins otherwise');
});
