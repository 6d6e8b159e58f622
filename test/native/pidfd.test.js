// @ts-check
'use strict';
const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const { spawn, spawnSync } = require('node:child_process');
const { Pidfd } = require('../../dist/native.js');
const { reaped, sleep, countFds } = require('../support/proc.js');

const sleeper = () => spawn('sleep', ['60'], { stdio: 'ignore' });

test('a child is signalled through its pidfd and its exit is observed', async () => {
  const child = sleeper();
  const pfd = Pidfd.open(/** @type {number} */ (child.pid));
  assert.equal(pfd.pid, child.pid);
  assert.equal(pfd.hasExited(), false);
  pfd.signal('SIGTERM');
  await pfd.exited;
  assert.equal(pfd.hasExited(), true);
  assert.deepEqual(await reaped(child), [null, 'SIGTERM']);
  pfd.close();
});

test('after the process is reaped, signalling fails with ESRCH naming the syscall', async () => {
  const child = sleeper();
  const pfd = Pidfd.open(/** @type {number} */ (child.pid));
  child.kill('SIGKILL');
  await reaped(child);
  assert.throws(() => pfd.signal('SIGTERM'), { code: 'ESRCH', syscall: 'pidfd_send_signal', errno: 3 });
  pfd.close();
});

test('pidfd_open of a pid that does not exist fails with ESRCH', () => {
  const gone = spawnSync('true');
  assert.throws(() => Pidfd.open(gone.pid), { code: 'ESRCH', syscall: 'pidfd_open' });
  assert.throws(() => Pidfd.open(0), TypeError);
  assert.throws(() => Pidfd.open(1.5), TypeError);
});

/** Make the next fork get `pid` by setting ns_last_pid; false when the kernel won't let us. */
function aimNextPid(pid) {
  try {
    fs.writeFileSync('/proc/sys/kernel/ns_last_pid', String(pid - 1));
    return true;
  } catch {
    return false;
  }
}

test('a process that later receives the recycled pid is never signalled through the old handle', async (t) => {
  if (!aimNextPid(process.pid)) {
    t.skip('cannot write /proc/sys/kernel/ns_last_pid (needs CAP_SYS_ADMIN over this pid namespace): pid recycling not forced');
    return;
  }
  // Another process may fork between our write and our spawn: retry a few times.
  for (let attempt = 1; attempt <= 20; attempt++) {
    const first = sleeper();
    const oldPid = /** @type {number} */ (first.pid);
    const old = Pidfd.open(oldPid);
    first.kill('SIGKILL');
    await reaped(first);
    aimNextPid(oldPid);
    const second = sleeper();
    if (second.pid !== oldPid) {
      second.kill('SIGKILL');
      await reaped(second);
      old.close();
      continue;
    }
    // Same pid number, another process: the old handle must not reach it.
    assert.throws(() => old.signal('SIGKILL'), { code: 'ESRCH' });
    assert.equal(old.hasExited(), true);
    const fresh = Pidfd.open(oldPid);
    await sleep(100);
    assert.equal(fresh.hasExited(), false, 'the new holder of the pid must still be running');
    assert.equal(second.exitCode, null);
    fresh.signal('SIGKILL');
    await fresh.exited;
    await reaped(second);
    old.close();
    fresh.close();
    return;
  }
  assert.fail('the pid never repeated in 20 attempts (a busy machine?)');
});

test('process_mrelease reports EINVAL for a process that is not dying, and frees a killed one', async () => {
  const child = sleeper();
  const pfd = Pidfd.open(/** @type {number} */ (child.pid));
  assert.throws(() => pfd.mrelease(), { code: 'EINVAL', syscall: 'process_mrelease' });
  pfd.signal('SIGKILL');
  // Right after SIGKILL the mm may still be there (success) or already freed (ESRCH): both fine.
  try {
    pfd.mrelease();
  } catch (err) {
    assert.equal(/** @type {any} */ (err).code, 'ESRCH');
  }
  await pfd.exited;
  await reaped(child);
  pfd.close();
});

test('a closed handle never calls back and refuses to signal', async () => {
  const child = sleeper();
  const pfd = Pidfd.open(/** @type {number} */ (child.pid));
  let called = false;
  pfd.exited.then(() => {
    called = true;
  });
  pfd.close();
  assert.equal(pfd.fd, -1);
  assert.throws(() => pfd.signal('SIGTERM'), { code: 'EBADF' });
  child.kill('SIGKILL');
  await reaped(child);
  await sleep(50);
  assert.equal(called, false);
});

test('closing releases the fd', async () => {
  const before = countFds();
  const children = Array.from({ length: 50 }, sleeper);
  const handles = children.map((c) => Pidfd.open(/** @type {number} */ (c.pid)));
  // stdio is ignored, so each child costs us exactly its pidfd.
  assert.equal(countFds(), before + 50);
  for (const h of handles) h.close();
  for (const c of children) c.kill('SIGKILL');
  await Promise.all(children.map(reaped));
  assert.ok(countFds() <= before, `fds before ${before}, after ${countFds()}`);
});

test('an exception thrown by the exit callback surfaces as an uncaught exception', () => {
  const script = `
    const { Pidfd } = require(${JSON.stringify(require.resolve('../../dist/native.js'))});
    process.on('uncaughtException', (e) => { console.log('uncaught:' + e.message); process.exit(0); });
    setTimeout(() => process.exit(3), 5000);
    const child = require('node:child_process').spawn('sleep', ['0.2']);
    // The raw handle: the callback itself runs from the event loop and throws.
    Pidfd.open(child.pid)['raw'].watchExit(() => { throw new Error('boom'); });
  `;
  const r = spawnSync(process.execPath, ['-e', script], { encoding: 'utf8', timeout: 10000 });
  assert.match(r.stdout, /uncaught:boom\n/);
  assert.equal(r.status, 0);
});

// A signal that has a handler ends poll(2) with EINTR whatever SA_RESTART says (signal(7)).
// node --cpu-prof samples the main thread with SIGPROF; the storm's profiled sbd (bench:storm
// SBD_PROF=1, issue 15 session 26) died of it in LeftoverReaper.forget: "poll: Interrupted
// system call". Here SIGPROF comes every 10 µs while hasExited() is asked over and over.
test('hasExited() answers through a storm of signals (poll interrupted is asked again, never thrown)', (t) => {
  const dir = fs.mkdtempSync(require('node:path').join(require('node:os').tmpdir(), 'sb-eintr-'));
  t.after(() => fs.rmSync(dir, { recursive: true, force: true }));
  const script = `
    const { Pidfd } = require(${JSON.stringify(require.resolve('../../dist/native.js'))});
    const child = require('node:child_process').spawn('sleep', ['60'], { stdio: 'ignore' });
    const pfd = Pidfd.open(child.pid);
    let calls = 0, error, exited = false;
    const until = Date.now() + 1500;
    try { while (Date.now() < until) { exited ||= pfd.hasExited(); calls++; } } catch (e) { error = { code: e.code, syscall: e.syscall }; }
    child.kill('SIGKILL');
    console.log(JSON.stringify({ calls, error, exited }));`;
  const r = spawnSync(process.execPath, ['--cpu-prof', `--cpu-prof-dir=${dir}`, '--cpu-prof-interval=10', '-e', script], { encoding: 'utf8', timeout: 30_000 });
  assert.equal(r.status, 0, r.stderr);
  const out = JSON.parse(r.stdout);
  assert.equal(out.error, undefined, `hasExited() threw ${JSON.stringify(out.error)} after ${out.calls} calls`);
  assert.equal(out.exited, false, 'a sleeping child never polls as exited');
  assert.ok(out.calls > 1000, `only ${out.calls} calls in 1.5 s`);
  // the premise: the signals did come (one profile sample per SIGPROF, a thousand at the least)
  const profile = JSON.parse(fs.readFileSync(require('node:path').join(dir, fs.readdirSync(dir)[0]), 'utf8'));
  assert.ok(profile.samples.length > 1000, `only ${profile.samples.length} SIGPROF samples: the test proved nothing`);
});
