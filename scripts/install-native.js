#!/usr/bin/env node
// @ts-check
'use strict';
// npm's install step: builds the C++ addon (native/) into build/Release/, where src/native.ts
// loads it. A checkout, whose devDependencies are installed, builds with cmake-js
// (CMakeLists.txt), as `npm run build:native` does. An installed tarball has no devDependencies:
// it builds with node-gyp (binding.gyp), which npm itself carries and names in
// npm_config_node_gyp. Node's headers come from nodedir (scripts/node-dir.js): these machines
// reach no web to download them. What is missing is said before a build tool fails on it.
const fs = require('node:fs');
const path = require('node:path');
const { spawnSync } = require('node:child_process');
const { nodeDir, buildEnv } = require('./node-dir.js');

const root = path.resolve(__dirname, '..');
const say = (/** @type {string} */ line) => process.stdout.write(`sessionbrake: ${line}\n`);

/** The first executable named `name` on PATH. @param {string} name */
function onPath(name) {
  for (const dir of (process.env.PATH ?? '').split(':').filter(Boolean)) {
    const file = path.join(dir, name);
    try {
      fs.accessSync(file, fs.constants.X_OK);
      return file;
    } catch { /* next */ }
  }
  return undefined;
}

/** A module's file resolved from this package (its own node_modules, then up), or undefined. @param {string} id */
function resolveHere(id) {
  try {
    return require.resolve(id, { paths: [root] });
  } catch {
    return undefined;
  }
}

/** @param {string} what @param {string[]} args */
function run(what, args) {
  say(`building the native addon with ${what}`);
  const r = spawnSync(process.execPath, args, { cwd: root, stdio: 'inherit', env: buildEnv() });
  if (r.status !== 0) {
    process.stderr.write(`sessionbrake: ${what} failed (${r.error ? r.error.message : `exit ${r.status ?? r.signal}`}): see its output above\n`);
    process.exit(1);
  }
}

/** A command given as a path or a name on PATH. @param {string} cmd */
const found = (cmd) => (cmd.includes('/') ? fs.existsSync(cmd) : onPath(cmd) !== undefined);

/** What a node-gyp build needs and is not here: one line each, with what to install. @returns {string[]} */
function missingForGyp() {
  const missing = [];
  const cxx = process.env.CXX?.split(' ')[0];
  if (cxx ? !found(cxx) : !found('c++') && !found('g++')) {
    missing.push(`a C++ compiler (${cxx ? `CXX=${cxx} is not found` : 'no c++ or g++ on PATH'}): install g++ (Debian: apt-get install g++)`);
  }
  if (!found('make')) missing.push('make (no make on PATH): install it (Debian: apt-get install make)');
  const python = process.env.npm_config_python ?? process.env.PYTHON ?? 'python3';
  if (!found(python)) missing.push(`python3, which node-gyp runs (${python} is not found): install it (Debian: apt-get install python3)`);
  const dir = nodeDir();
  if (!dir || !fs.existsSync(path.join(dir, 'include', 'node', 'common.gypi'))) {
    missing.push(`Node's headers (include/node/ with common.gypi and node_api.h, for Node ${process.version}): ` +
      (dir ? `nodedir is ${dir}, which has no include/node/common.gypi` : `none beside ${process.execPath} and no nodedir set`) +
      ': install the headers of this Node version (the include/ of its release tarball) and set nodedir in npmrc (npm config set nodedir DIR)');
  }
  return missing;
}

function main() {
  const cmakeJs = resolveHere('cmake-js/bin/cmake-js');
  if (cmakeJs && onPath('cmake')) {
    run('cmake-js (CMakeLists.txt)', [cmakeJs, 'compile', '--CDCMAKE_BUILD_TYPE=Release']);
    return;
  }
  const gyp = process.env.npm_config_node_gyp ?? resolveHere('node-gyp/bin/node-gyp.js') ??
    path.join(path.dirname(process.execPath), '..', 'lib', 'node_modules', 'npm', 'node_modules', 'node-gyp', 'bin', 'node-gyp.js');
  const missing = [...(fs.existsSync(gyp) ? [] : [`node-gyp (npm carries it: run this through npm, e.g. npm rebuild sessionbrake; ${gyp} does not exist)`]), ...missingForGyp()];
  if (missing.length) {
    process.stderr.write(`sessionbrake: cannot build the native addon: missing\n${missing.map((m) => `  - ${m}\n`).join('')}`);
    process.exit(1);
  }
  const dir = /** @type {string} */ (nodeDir());
  // --jobs=max: one compiler per core; the sources are independent files.
  run(`node-gyp (binding.gyp, headers from ${dir})`, [gyp, 'rebuild', '--release', '--jobs=max', `--nodedir=${dir}`]);
}

main();
