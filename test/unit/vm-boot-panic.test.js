// @ts-check
'use strict';
// The lab boots a guest once more when its kernel panicked while booting (test/vm/suite.test.js):
// which consoles say so.
const test = require('node:test');
const assert = require('node:assert/strict');
const { bootPanicOf } = require('../vm/boot-panic.js');

test('a kernel panic on the console is found, without its timestamp', () => {
  const console = ['[    4.143225] PKRU: 55555554', '[    4.143380] Kernel panic - not syncing: Fatal exception in interrupt', '[    5.789457] Shutting down cpus with NMI'].join('\n');
  assert.equal(bootPanicOf(console), 'Kernel panic - not syncing: Fatal exception in interrupt');
  assert.equal(bootPanicOf('Kernel panic - not syncing: VFS: Unable to mount root fs'), 'Kernel panic - not syncing: VFS: Unable to mount root fs');
});

test('a console without a panic (a slow boot, an oops the kernel survived, a panic named in prose) is not one', () => {
  assert.equal(bootPanicOf('SeaBIOS (version 1.16.2)\nBooting from ROM...\nlab login:'), undefined);
  assert.equal(bootPanicOf('[    4.1] BUG: unable to handle page fault\n[    4.2] Oops: 0000 [#1] PREEMPT SMP'), undefined);
  assert.equal(bootPanicOf('the runner says: no Kernel panic - not syncing here'), undefined);
});
