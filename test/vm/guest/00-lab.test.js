// @ts-check
'use strict';
// Proves the lab as user 'tester': cgroup v2, delegated memory controller, PSI, user bus, and a
// transient scope made over D-Bus whose memory.high / memory.swap.max are what we asked for.
const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const { labOnly, connectUserManager, readCgroupFile } = require('./helpers');

const uid = process.getuid?.() ?? -1;

test('runs as tester (uid 1000)', labOnly, () => {
  assert.equal(uid, 1000);
});

test('cgroup2 is mounted at /sys/fs/cgroup', labOnly, () => {
  const mounts = fs.readFileSync('/proc/self/mounts', 'utf8');
  assert.match(mounts, /^cgroup2 \/sys\/fs\/cgroup cgroup2 /m);
});

test('user manager delegates the memory controller', labOnly, () => {
  const dir = `/sys/fs/cgroup/user.slice/user-${uid}.slice/user@${uid}.service`;
  assert.ok(readCgroupFile(dir, 'cgroup.subtree_control').split(' ').includes('memory'));
  assert.equal(fs.statSync(dir).uid, uid, 'the user manager owns its cgroup');
});

// The lab's own guests have PSI; the suite's psi=0 guest (bookworm-psi0) must not: each side asserted.
const psiArgs = fs.existsSync('/proc/cmdline') ? fs.readFileSync('/proc/cmdline', 'utf8').split(/\s+/).filter((a) => a.startsWith('psi=')) : [];
const bootedWithoutPsi = psiArgs[psiArgs.length - 1] === 'psi=0'; // the kernel keeps the last one

test(bootedWithoutPsi ? 'booted psi=0: no /proc/pressure/memory, no memory.pressure (a kernel without PSI)' : '/proc/pressure/memory exists (PSI)', labOnly, () => {
  if (bootedWithoutPsi) {
    assert.equal(fs.existsSync('/proc/pressure/memory'), false);
    assert.equal(fs.existsSync(`/sys/fs/cgroup/user.slice/user-${uid}.slice/user@${uid}.service/init.scope/memory.pressure`), false);
    return;
  }
  assert.match(fs.readFileSync('/proc/pressure/memory', 'utf8'), /^full avg10=/m);
});

test('user bus socket exists', labOnly, () => {
  assert.equal(process.env.DBUS_SESSION_BUS_ADDRESS, `unix:path=/run/user/${uid}/bus`);
  assert.ok(fs.statSync(`/run/user/${uid}/bus`).isSocket());
});

test('transient scope over D-Bus gets MemoryHigh=64M and MemorySwapMax=0', labOnly, async (t) => {
  const sd = await connectUserManager();
  /** @type {import('./helpers').Scope | undefined} */
  let scope;
  t.after(async () => {
    if (scope) await sd.stopScope(scope);   // kills the sleep, waits for the unit to go
    sd.close();
  });
  // StartTransientUnit('…scope', 'fail', [['PIDs', au [pid]], MemoryHigh, MemorySwapMax]), then JobRemoved
  scope = await sd.startScope(`sbtest-lab-${process.pid}.scope`,
    { MemoryHigh: 64n << 20n, MemorySwapMax: 0n }, ['sleep', '120']);
  assert.match(scope.cgroupPath, /\/user@1000\.service\/.*sbtest-lab-\d+\.scope$/);
  assert.equal(readCgroupFile(scope.cgroupPath, 'memory.high'), '67108864');
  assert.equal(readCgroupFile(scope.cgroupPath, 'memory.swap.max'), '0');
  assert.ok(readCgroupFile(scope.cgroupPath, 'cgroup.procs').split('\n').includes(String(scope.pid)));
});
