// @ts-check
'use strict';
// binding.gyp must keep building the same sources as CMakeLists.txt: build them with node-gyp
// in a scratch copy of the project and run the self-check against that build.
const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { spawnSync } = require('node:child_process');

const root = path.resolve(__dirname, '../..');

const { nodeDir } = require('../../scripts/node-dir.js');

test('binding.gyp builds every source file of native/ with node-gyp (the addon as one unit that includes them all)', () => {
  const gyp = fs.readFileSync(path.join(root, 'binding.gyp'), 'utf8');
  const sources = [...gyp.matchAll(/"(native\/[^"]+\.cc)"/g)].map((m) => m[1]);
  assert.deepEqual(sources.sort(), ['native/gate/exec_gate.cc', 'native/unity/addon-all.cc']);
  const unity = fs.readFileSync(path.join(root, 'native/unity/addon-all.cc'), 'utf8');
  const included = [...unity.matchAll(/^#include "\.\.\/([^"]+\.cc)"$/gm)].map((m) => `native/${m[1]}`);
  const built = [...included, 'native/gate/exec_gate.cc'].sort();
  const present = fs.readdirSync(path.join(root, 'native'), { recursive: true })
    .map(String).filter((f) => f.endsWith('.cc') && !f.startsWith('unity/')).map((f) => `native/${f}`).sort();
  assert.deepEqual(built, present, 'a native/*.cc left out of the unit would be a missing symbol at load');
});

test('the node-gyp build loads and passes the self-check', { timeout: 300_000 }, () => {
  const scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'sb-gyp-'));
  for (const f of ['binding.gyp', 'package.json', 'native']) fs.cpSync(path.join(root, f), path.join(scratch, f), { recursive: true });
  fs.symlinkSync(path.join(root, 'node_modules'), path.join(scratch, 'node_modules'));
  const dir = nodeDir();
  const args = [require.resolve('node-gyp/bin/node-gyp.js'), 'rebuild', '--loglevel=warn', ...(dir ? [`--nodedir=${dir}`] : [])];
  const build = spawnSync(process.execPath, args, { cwd: scratch, encoding: 'utf8' });
  assert.equal(build.status, 0, `node-gyp rebuild failed:\n${build.stdout}\n${build.stderr}`);
  const addon = path.join(scratch, 'build/Release/sessionbrake.node');
  const check = spawnSync(process.execPath, [path.join(root, 'dist/native-selfcheck.js')], {
    encoding: 'utf8',
    env: { ...process.env, SESSIONBRAKE_ADDON: addon },
  });
  assert.equal(check.status, 0, `${check.stdout}\n${check.stderr}`);
  assert.match(check.stdout, new RegExp(`addon: ${addon.replace(/[.]/g, '\\.')} \\(node-gyp,`));
  assert.match(check.stdout, /selfcheck: ok/);
  assert.ok(fs.statSync(path.join(scratch, 'build/Release/sb-exec-gate')).mode & 0o111, 'the exec gate is built too');
  fs.rmSync(scratch, { recursive: true, force: true });
});
