#!/usr/bin/env node
// @ts-check
'use strict';
// `npm start`: on a machine run by systemd with a user manager, link sbctl and sbd into
// ~/.local/bin (scripts/link-bins.js), install and start sbd as a user unit and show its
// status; anywhere else, run the demo in the Debian lab guest instead.
const fs = require('node:fs');
const path = require('node:path');
const { spawnSync } = require('node:child_process');
const { linkBins } = require('./link-bins.js');

const root = path.resolve(__dirname, '..');
const sbctl = (...args) => spawnSync(process.execPath, [path.join(root, 'dist/cli/main.js'), ...args], { stdio: 'inherit' }).status ?? 1;
const runtime = process.env.XDG_RUNTIME_DIR;
const userBus = process.env.DBUS_SESSION_BUS_ADDRESS || (runtime ? `${runtime}/bus` : '');
const systemdHere = fs.existsSync('/run/systemd/system') && userBus !== '' && (process.getuid?.() ?? 0) !== 0;

if (!systemdHere) {
  console.log('start: this machine is not run by systemd with a user manager for you (or you are root):');
  console.log('start: showing the demo in the Debian lab guest instead (npm run demo).');
  process.exit(spawnSync(process.execPath, [path.join(__dirname, 'demo.js')], { stdio: 'inherit' }).status ?? 1);
}
// The commands first: they are usable even when the unit cannot start. A command that could not
// be linked is said and does not stop the install.
const links = linkBins();
for (const line of links.lines) console.log(`start: ${line}`);
const installed = sbctl('install', '--now');
if (installed !== 0) process.exit(installed);
const status = sbctl('status');
// Last, where it is seen: what PATH needs for the commands to be found by name.
for (const line of links.advice) console.log(`start: ${line}`);
process.exit(status === 0 ? 0 : 1);
