#!/usr/bin/env node
// @ts-check
'use strict';
// Host step of 99-lab-panic.test.js, the lab's self-test of its mid-run reboot: a marker in this
// boot's share (the guest's /mnt/lab). The root step panics a kernel that sees it; the suite boots
// the guest again with a new share, which has no marker, and runs the file again from its start.
const fs = require('node:fs');
const path = require('node:path');

const share = process.argv[2];
if (!share || !fs.existsSync(share)) throw new Error(`usage: 99-lab-panic.host.js LAB_SHARE_DIR (got ${share})`);
fs.writeFileSync(path.join(share, 'panic-once'), 'the root step of 99-lab-panic panics the kernel that sees this\n');
console.log(`marker written: ${path.join(share, 'panic-once')}`);
