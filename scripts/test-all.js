#!/usr/bin/env node
// @ts-check
'use strict';
// `npm test`: every test of the project in one node:test run, so one summary counts them all:
// host unit and addon tests, the addon under ASan and valgrind, and the guest suite
// (test/vm/suite.test.js boots the Debian guest and mirrors each guest test's result).
//   npm test                       everything
//   npm test -- --host-only        skip the guest suite and the memory check (fast loop)
const fs = require('node:fs');
const path = require('node:path');
const { spawnSync } = require('node:child_process');

const root = path.resolve(__dirname, '..');
const hostOnly = process.argv.includes('--host-only');

/** Every *.test.js under dir, except the guest's own files (they run inside the VM). */
function find(dir) {
  const out = [];
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, entry.name);
    if (entry.isDirectory()) {
      if (p !== path.join(root, 'test/vm/guest')) out.push(...find(p));
    } else if (entry.name.endsWith('.test.js')) {
      out.push(p);
    }
  }
  return out;
}

let files = find(path.join(root, 'test')).sort();
if (hostOnly) files = files.filter((f) => !f.includes(`${path.sep}vm${path.sep}`) && !f.includes(`${path.sep}memcheck${path.sep}`));
const r = spawnSync(process.execPath, ['--test', '--test-reporter=spec', ...files], { cwd: root, stdio: 'inherit' });
process.exit(r.status ?? 1);
