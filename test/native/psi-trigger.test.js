// @ts-check
'use strict';
const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const { PsiTrigger, PsiWindowError } = require('../../dist/native.js');
const { fdsPointingAt, hasCapSysResource } = require('../support/proc.js');

const SYSTEM = '/proc/pressure/memory';
const havePsi = fs.existsSync(SYSTEM);
const skip = havePsi ? false : `${SYSTEM} does not exist: this kernel has no PSI (CONFIG_PSI, psi=1)`;

test('a trigger on /proc/pressure/memory arms and close() releases its fd', { skip }, () => {
  const before = fdsPointingAt(SYSTEM).length;
  const t = PsiTrigger.arm(SYSTEM, { kind: 'full', stallUs: 100_000, windowUs: 2_000_000 }, () => {});
  assert.ok(t.fd >= 0);
  assert.equal(fdsPointingAt(SYSTEM).length, before + 1);
  t.close();
  assert.equal(t.fd, -1);
  assert.equal(fdsPointingAt(SYSTEM).length, before);
});

test('a malformed trigger fails with a precise error before reaching the kernel', { skip }, () => {
  const arm = (/** @type {any} */ spec) => PsiTrigger.arm(SYSTEM, spec, () => {});
  assert.throws(() => arm({ kind: 'half', stallUs: 1, windowUs: 2_000_000 }), {
    name: 'RangeError',
    message: `PSI trigger on ${SYSTEM}: kind must be "some" or "full", got "half"`,
  });
  assert.throws(() => arm({ kind: 'full', stallUs: 100_000, windowUs: 20_000_000 }), {
    message: `PSI trigger on ${SYSTEM}: windowUs must be from 500000 to 10000000 µs, got 20000000`,
  });
  assert.throws(() => arm({ kind: 'full', stallUs: 3_000_000, windowUs: 2_000_000 }), {
    message: `PSI trigger on ${SYSTEM}: stallUs (3000000) must not exceed windowUs (2000000)`,
  });
  assert.throws(() => arm({ kind: 'some', stallUs: -5, windowUs: 2_000_000 }), /stallUs must be a positive integer/);
});

test('a window that is not a multiple of 2 s: typed EINVAL without CAP_SYS_RESOURCE, armed with it', { skip }, () => {
  const spec = { kind: 'some', stallUs: 100_000, windowUs: 1_000_000 };
  if (hasCapSysResource()) {
    const t = PsiTrigger.arm(SYSTEM, /** @type {any} */ (spec), () => {});
    assert.ok(t.fd >= 0);
    t.close();
    return;
  }
  assert.throws(
    () => PsiTrigger.arm(SYSTEM, /** @type {any} */ (spec), () => {}),
    (err) => {
      assert.ok(err instanceof PsiWindowError);
      assert.equal(err.code, 'EINVAL');
      assert.equal(err.syscall, 'write');
      assert.equal(err.path, SYSTEM);
      assert.equal(err.suggestedWindowUs, 2_000_000);
      return true;
    },
  );
});

test('arming on a missing pressure file names the file and ENOENT', () => {
  const missing = '/sys/fs/cgroup/sb-no-such-cgroup/memory.pressure';
  assert.throws(() => PsiTrigger.arm(missing, { kind: 'full', stallUs: 100_000, windowUs: 2_000_000 }, () => {}), {
    code: 'ENOENT',
    syscall: 'open',
    path: missing,
  });
});
