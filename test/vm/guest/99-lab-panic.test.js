// @ts-check
'use strict';
// The lab's self-test, run only when asked (SB_VM_ONLY=99 npm run test:vm): when a guest's kernel
// panics mid-file, the suite boots it again and runs that file again from its start
// (test/vm/suite.test.js, MID_RUN_REBOOTS). The root step panicked the first boot; this file's
// test runs in the second, which the host's summary shows with the panic said as a diagnostic.
const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const { labOnly } = require('./helpers');

test('the lab: a kernel panic mid-file reboots the guest, the file runs again in the new boot', labOnly, () => {
  assert.ok(!fs.existsSync('/mnt/lab/panic-once'), 'this boot\'s share has no marker: it is the boot after the panic');
  const uptimeS = Number(fs.readFileSync('/proc/uptime', 'utf8').split(' ')[0]);
  assert.ok(uptimeS < 300, `a fresh guest (uptime ${uptimeS} s)`);
});
