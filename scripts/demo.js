#!/usr/bin/env node
// @ts-check
'use strict';
// `npm run demo`: on a machine without systemd (or for a safe look), boot the Debian lab guest
// and show what sessionbrake does there, step by step (test/vm/demo/demo.sh).
const path = require('node:path');
const fs = require('node:fs');
const { spawnSync } = require('node:child_process');

const root = path.resolve(__dirname, '..');
for (const f of ['build/Release/sessionbrake.node', 'dist/cli/main.js']) {
  if (!fs.existsSync(path.join(root, f))) {
    console.error(`demo: ${f} is missing: run \`npm ci\` first`);
    process.exit(2);
  }
}
console.log('demo: building or reusing the guest image (the first time takes a few minutes)...');
const build = spawnSync('bash', [path.join(root, 'test/vm/build-image.sh')], { stdio: ['ignore', 'ignore', 'inherit'] });
if (build.status !== 0) process.exit(build.status ?? 1);
console.log('demo: booting the guest (about 20 s under software emulation)...');
const r = spawnSync('bash', [path.join(root, 'test/vm/run-in-vm.sh'), '-p', root, '-t', '300', '-f', path.join(root, 'test/vm/demo/demo.sh')], { stdio: 'inherit' });
process.exit(r.status ?? 1);
