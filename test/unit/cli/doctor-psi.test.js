// @ts-check
'use strict';
// sbctl doctor on a kernel without PSI: says PSI is off, why, what sbd does instead, and the one
// thing that turns it on (the kernel argument psi=1, and how on GRUB). The real kernel: guest 39.
const test = require('node:test');
const assert = require('node:assert/strict');
const { psiCheck, formatChecks } = require('../../../dist/cli/doctor.js');

test('doctor, PSI present: OK', () => {
  assert.deepEqual(psiCheck(true, 'BOOT_IMAGE=/vmlinuz root=/dev/vda'), { name: 'PSI', ok: true, detail: '/proc/pressure/memory present' });
});

test('doctor, booted psi=0: PSI is off, the fallback named, psi=1 and GRUB as the fix', () => {
  const c = psiCheck(false, 'root=/dev/vda psi=1 quiet psi=0\n');
  assert.equal(c.ok, false);
  assert.match(c.detail, /^PSI is off: .*booted with psi=0/);
  assert.match(c.detail, /samples each session/);
  assert.match(c.fix ?? '', /kernel argument psi=1/);
  assert.match(c.fix ?? '', /GRUB_CMDLINE_LINUX in \/etc\/default\/grub/);
  assert.match(c.fix ?? '', /update-grub/);
  assert.match(c.fix ?? '', /remove psi=0/);
  assert.match(formatChecks([c]), /^FAIL  PSI .*\n      fix: boot with the kernel argument psi=1/);
});

test('doctor, no psi= argument and no PSI: off by default (RHEL-family), no psi=0 to remove', () => {
  const c = psiCheck(false, 'root=/dev/sda1 ro');
  assert.match(c.detail, /off by default/);
  assert.doesNotMatch(c.fix ?? '', /remove psi=0/);
  assert.match(c.fix ?? '', /grubby --update-kernel=ALL --args=psi=1/);
});
