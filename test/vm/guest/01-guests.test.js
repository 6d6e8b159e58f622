// @ts-check
'use strict';
// What differs between the lab's guests (Debian 12: systemd 252, kernel 6.1; Debian 13: systemd
// 257, kernel 6.12), stated per guest and measured, so that a test or sbd never assumes one of them.
// Also what does NOT differ although one might think so: OOMPolicy= on a transient scope.
const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const { spawn, spawnSync } = require('node:child_process');
const { labOnly, labGuest, connectUserManager, readCgroupFile, parseKeyed, hogArgv, waitFor, Variant } = require('./helpers');

/** @type {Record<string, {debian: number, systemd: number, kernel: RegExp}>} */
const EXPECTED = {
  bookworm: { debian: 12, systemd: 252, kernel: /^6\.1\./ },
  trixie: { debian: 13, systemd: 257, kernel: /^6\.12\./ },
};
const USER_MGR = '/sys/fs/cgroup/user.slice/user-1000.slice/user@1000.service';

test('the guest is the one the suite booted, with systemd as PID 1', labOnly, (t) => {
  const g = labGuest();
  t.diagnostic(`debian ${g.debian} (${g.suite}), systemd ${g.systemd}, kernel ${g.kernel}`);
  if (process.env.SB_LAB_GUEST) assert.equal(g.suite, process.env.SB_LAB_GUEST);
  const want = EXPECTED[g.suite];
  assert.ok(want, `unknown guest ${g.suite}`);
  assert.equal(g.debian, want.debian);
  assert.equal(g.systemd, want.systemd);
  assert.match(g.kernel, want.kernel);
  assert.equal(fs.readFileSync('/proc/1/comm', 'utf8').trim(), 'systemd');
});

test('cgroup files: kernel 6.12 adds memory.swap.peak, pids.events.local, cpu.stat.local; 6.1 has none of them', labOnly, () => {
  const newer = labGuest().suite === 'trixie';
  for (const f of ['memory.swap.peak', 'pids.events.local', 'cpu.stat.local']) {
    assert.equal(fs.existsSync(`${USER_MGR}/${f}`), newer, `${f} on ${labGuest().suite}`);
  }
  // the files sbd relies on are on both
  for (const f of ['memory.pressure', 'memory.events', 'memory.high', 'memory.max', 'memory.peak', 'memory.swap.max', 'cgroup.kill', 'cgroup.freeze']) {
    assert.ok(fs.existsSync(`${USER_MGR}/${f}`), `${f} on ${labGuest().suite}`);
  }
});

test('user@.service: systemd 257 puts the user manager in DelegateSubgroup=init.scope; 252 has no such property', labOnly, () => {
  const r = spawnSync('systemctl', ['show', 'user@1000.service', '-p', 'DelegateSubgroup', '-p', 'Delegate'], { encoding: 'utf8' });
  assert.equal(r.status, 0, r.stderr);
  assert.match(r.stdout, /^Delegate=yes$/m);
  if (labGuest().systemd >= 254) assert.match(r.stdout, /^DelegateSubgroup=init\.scope$/m);
  else assert.doesNotMatch(r.stdout, /DelegateSubgroup/);
  // on both, the manager itself lives in init.scope of its delegated cgroup
  assert.ok(readCgroupFile(`${USER_MGR}/init.scope`, 'cgroup.procs').split('\n').length >= 1);
});

test('/tmp: a tmpfs on Debian 13 (files there are memory, charged to the writer\'s cgroup), the root disk on Debian 12', labOnly, () => {
  const mount = fs.readFileSync('/proc/self/mounts', 'utf8').split('\n').find((l) => l.split(' ')[1] === '/tmp');
  if (labGuest().suite === 'trixie') assert.match(mount ?? '', /^tmpfs \/tmp tmpfs /);
  else assert.equal(mount, undefined);
});

/**
 * A scope (MemoryMax=64M, no swap) with a sleeper and a hog that wants 200 MiB: the kernel
 * OOM-kills the hog. Returns what became of the scope and the sleeper.
 * @param {Awaited<ReturnType<typeof connectUserManager>>} sd @param {string | undefined} policy
 */
async function oomInScope(sd, policy) {
  const props = /** @type {[string, import('dbus-next').Variant][]} */ ([
    ['MemoryMax', new Variant('t', 64n << 20n)], ['MemorySwapMax', new Variant('t', 0n)]]);
  if (policy) props.push(['OOMPolicy', new Variant('s', policy)]);
  // the hog waits 3 s so that it allocates inside the scope; both pids go in at creation
  const hog = spawn('sh', ['-c', 'sleep 3; exec "$@"', 'hog', ...hogArgv(200, 60, true)], { stdio: ['ignore', 'pipe', 'pipe'] });
  const hogEnd = new Promise((resolve) => hog.on('exit', (code, signal) => resolve(signal ?? code)));
  const scope = await sd.startScope(`sbtest-oom-${policy ?? 'default'}-${process.pid}.scope`,
    [['PIDs', new Variant('au', [/** @type {number} */ (hog.pid)])], ...props], ['sleep', '120']);
  try {
    const hogEnded = await Promise.race([hogEnd, new Promise((r) => setTimeout(() => r('still running after 90 s'), 90_000))]);
    const events = await waitFor(() => {
      try { const e = parseKeyed(readCgroupFile(scope.cgroupPath, 'memory.events')); return e.oom_kill ? e : undefined; } catch { return { gone: 1 }; }
    }, 5000, { what: 'oom_kill in memory.events' }).catch(() => ({}));
    // the manager handles the OOM event asynchronously: give it a moment to act (or not)
    await new Promise((r) => setTimeout(r, 2000));
    /** @type {string} */
    let state;
    try { state = await sd.unitProperty(scope.unit, 'Unit', 'ActiveState'); } catch (err) { state = `gone (${/** @type {Error} */ (err).message})`; }
    const sleeperAlive = scope.child.exitCode === null && scope.child.signalCode === null;
    return { hogEnded, state, sleeperAlive, events };
  } finally {
    hog.kill('SIGKILL');
    await sd.stopScope(scope);
    try { await sd.manager.ResetFailedUnit(scope.unit); } catch { /* not failed, or gone */ }
  }
}

test('OOMPolicy= on a transient scope: both guests take it (Debian\'s systemd 252 too); continue keeps the scope, the default stops it', labOnly, async (t) => {
  const sd = await connectUserManager();
  t.after(() => sd.close());
  const dflt = await oomInScope(sd, undefined);
  t.diagnostic(`default: ${JSON.stringify(dflt)}`);
  assert.equal(dflt.hogEnded, 'SIGKILL', 'the kernel OOM-killed the hog');
  assert.notEqual(dflt.state, 'active', 'OOMPolicy=stop (the default): the scope is stopped');
  assert.equal(dflt.sleeperAlive, false, 'OOMPolicy=stop: the other process died with the scope');
  const cont = await oomInScope(sd, 'continue');
  t.diagnostic(`continue: ${JSON.stringify(cont)}`);
  assert.equal(cont.hogEnded, 'SIGKILL', 'the kernel OOM-killed the hog');
  assert.equal(cont.state, 'active', 'OOMPolicy=continue: the scope lives on');
  assert.equal(cont.sleeperAlive, true, 'OOMPolicy=continue: the other process lives');
  assert.equal(/** @type {any} */ (cont.events).oom_kill, 1);
});
