// @ts-check
'use strict';
// The addon against the real kernel, as tester: a hog wedged against MemoryHigh=64M with no
// swap fires a PSI trigger, moves memory.events.local, is stopped through a pidfd, and the
// removal of its scope's cgroup is seen as "gone" by both the watch and the trigger.
const test = require('node:test');
const assert = require('node:assert/strict');
const path = require('node:path');
const { labOnly, connectUserManager, readCgroupFile, parseKeyed, hogArgv, waitFor } = require('./helpers');

const native = labOnly.skip ? undefined : require(path.resolve(__dirname, '../../../dist/native.js'));
const MiB = 1n << 20n;

test('the addon on a real wedged scope', labOnly, async (t) => {
  const { Pidfd, FileWatch, PsiTrigger, PsiWindowError } = /** @type {typeof import('../../../src/native')} */ (native);
  const sd = await connectUserManager();
  t.after(() => sd.close());
  // 400 MiB wanted, 64 MiB brake, no swap: throttled, never killed; bounded at 120 s.
  const scope = await sd.startScope(`sbtest-addon-${process.pid}.scope`, { MemoryHigh: 64n * MiB, MemorySwapMax: 0n }, hogArgv(400, 120));
  t.after(() => scope.child.kill('SIGKILL'));
  const pressureFile = path.join(scope.cgroupPath, 'memory.pressure');
  const eventsFile = path.join(scope.cgroupPath, 'memory.events.local');

  /** @type {string[]} */
  const psiEvents = [];
  /** @type {Array<{path: string, kind: string}>} */
  const fileEvents = [];
  const trigger = PsiTrigger.arm(pressureFile, { kind: 'full', stallUs: 100_000, windowUs: 2_000_000 }, (k) => psiEvents.push(k));
  const watch = new FileWatch((e) => fileEvents.push(e));
  watch.add(eventsFile);
  t.after(() => {
    trigger.close();
    watch.close();
  });

  await t.test('a PSI trigger with a 2 s window fires as the hog stalls', async () => {
    await waitFor(() => psiEvents.includes('fired'), 30_000, { what: 'the PSI trigger to fire' });
    const full = /full .* total=(\d+)/.exec(readCgroupFile(scope.cgroupPath, 'memory.pressure'));
    assert.ok(full && Number(full[1]) > 100_000, `full total: ${full?.[1]}`);
  });

  await t.test('a 1 s window is refused to the unprivileged user with the typed EINVAL', () => {
    assert.throws(
      () => PsiTrigger.arm(pressureFile, { kind: 'full', stallUs: 100_000, windowUs: 1_000_000 }, () => {}),
      (err) => err instanceof PsiWindowError && err.code === 'EINVAL' && err.suggestedWindowUs === 2_000_000,
    );
  });

  await t.test('the watch on memory.events.local fires as the own high counter moves', async () => {
    const before = parseKeyed(readCgroupFile(scope.cgroupPath, 'memory.events.local')).high;
    fileEvents.length = 0;
    await waitFor(() => fileEvents.some((e) => e.path === eventsFile && e.kind === 'modified'), 10_000, { what: 'a modified event' });
    const after = await waitFor(() => {
      const high = parseKeyed(readCgroupFile(scope.cgroupPath, 'memory.events.local')).high;
      return high > before && high;
    }, 10_000, { what: 'high to move' });
    assert.ok(after > before);
  });

  await t.test('a pidfd stops the hog and its exit is observed', async () => {
    const pfd = Pidfd.open(scope.pid);
    assert.equal(pfd.hasExited(), false);
    pfd.signal('SIGKILL');
    await Promise.race([pfd.exited, new Promise((_, reject) => setTimeout(() => reject(new Error('the hog did not exit within 20 s of SIGKILL')), 20_000))]);
    assert.equal(pfd.hasExited(), true);
    pfd.close();
  });

  await t.test('the removal of the scope\'s cgroup is "gone" for the watch and the PSI trigger', async () => {
    // An empty scope is stopped by systemd, which removes its cgroup.
    await waitFor(() => fileEvents.some((e) => e.path === eventsFile && e.kind === 'gone'), 20_000, { what: 'a gone event' });
    assert.equal(watch.size, 0);
    await waitFor(() => psiEvents.includes('gone'), 20_000, { what: 'POLLERR on the trigger' });
    assert.equal(trigger.fd, -1, 'a gone trigger has released its fd');
  });
});
