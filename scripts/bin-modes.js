#!/usr/bin/env node
// @ts-check
'use strict';
// After tsc: package.json's commands (dist/cli/main.js, dist/daemon/main.js) made executable
// (a+x where readable), as npm makes the bins it links. tsc writes them 0644, and `npm start`'s
// links in ~/.local/bin run them directly, even from a checkout mounted read-only.
const fs = require('node:fs');
const path = require('node:path');

const root = path.resolve(__dirname, '..');
const pkg = JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8'));
for (const file of Object.values(pkg.bin ?? {}).map((f) => path.join(root, String(f)))) {
  const mode = fs.statSync(file).mode & 0o7777;
  const wanted = mode | ((mode & 0o444) >> 2);
  if (wanted !== mode) fs.chmodSync(file, wanted);
}
