#!/usr/bin/env node
// @ts-check
'use strict';
// Host step of 58-install.test.js (suite.test.js runs it first): `npm pack` of the project into
// the lab share given as argv[2] (the guest's /mnt/lab), at pack/, as an operator packs it.
// --ignore-scripts: dist/ is built already (the suite needs it), and prepare's tsc would rewrite
// dist/ while the other lane's guest reads it over 9p.
const fs = require('node:fs');
const path = require('node:path');
const { spawnSync } = require('node:child_process');

const root = path.resolve(__dirname, '../../..');
const share = process.argv[2];
if (!share || !fs.existsSync(share)) throw new Error(`usage: 58-install.host.js LAB_SHARE_DIR (got ${share})`);
const dest = path.join(share, 'pack');
fs.rmSync(dest, { recursive: true, force: true });
fs.mkdirSync(dest, { mode: 0o755 });
const t0 = Date.now();
const r = spawnSync('npm', ['pack', '--ignore-scripts', '--json', '--pack-destination', dest], { cwd: root, encoding: 'utf8' });
if (r.status !== 0) {
  process.stderr.write(`npm pack failed (rc ${r.status}): ${r.stderr}`);
  process.exit(1);
}
const [info] = JSON.parse(r.stdout);
const file = path.join(dest, info.filename);
fs.chmodSync(file, 0o644);   // tester reads it in the guest
console.log(`npm pack: ${info.filename}, ${(fs.statSync(file).size / 1e6).toFixed(2)} MB packed, ${(info.unpackedSize / 1e6).toFixed(2)} MB unpacked, ` +
  `${info.entryCount} files (${info.bundled.length} bundled packages), ${((Date.now() - t0) / 1000).toFixed(1)} s`);
