#!/usr/bin/env node
// @ts-check
'use strict';
// Host step of 99-lab-panic.test.js, the lab's self-test of its mid-run reboot: the first time it
// runs in a suite (the suite is its parent process), a marker in this boot's share (the guest's
// /mnt/lab), which the root step answers by panicking the kernel. The suite boots the guest again
// with a new share and runs this step again: no marker then, so the file runs to its end.
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');

const share = process.argv[2];
if (!share || !fs.existsSync(share)) throw new Error(`usage: 99-lab-panic.host.js LAB_SHARE_DIR (got ${share})`);
const once = path.join(os.tmpdir(), `sbvm-99-panicked-${process.ppid}`);
try {
  fs.writeFileSync(once, `${share}\n`, { flag: 'wx' });
} catch {
  console.log(`no marker: the guest panicked once in this suite already (${fs.readFileSync(once, 'utf8').trim()})`);
  fs.rmSync(once, { force: true }); // the second run is the last: nothing left in the host's tmp
  process.exit(0);
}
fs.writeFileSync(path.join(share, 'panic-once'), 'the root step of 99-lab-panic panics the kernel that sees this\n');
console.log(`marker written: ${path.join(share, 'panic-once')}`);
