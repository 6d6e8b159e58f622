// @ts-check
'use strict';
// The lab's self-test, run only when asked (SB_VM_ONLY=99 npm run test:vm): when a guest's kernel
// panics mid-file, the suite boots it again and runs that file again from its start
// (test/vm/suite.test.js, MID_RUN_REBOOTS), its host step too. The root step panicked the first
// boot; this file's test runs in the second, which the host's summary shows with the panic said
// as a diagnostic. The host step marks only the suite's first boot (test/vm/guest/99-lab-panic.host.js).
const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const { labOnly } = require('./helpers');

test('the lab: a kernel panic mid-file reboots the guest, the file runs again in the new boot', labOnly, () => {
  // the first boot's kernel panicked in the root step: reaching here at all is the second boot
  assert.ok(!fs.existsSync('/mnt/lab/panic-once'), 'this boot\'s share has no marker: it is the boot after the panic');
});
