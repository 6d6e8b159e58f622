// @ts-check
'use strict';
// Issue 12, fault 7: the notify command runs in a process group (and session) of its own and the
// whole group dies at the time-out, a grandchild too; its exit status and the first KiB of its
// output are logged, never its argv; at most a few run at once, the rest dropped and counted.
// Real short-lived commands on this host.
const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const pino = require('pino');
const { NotifyCommand, MAX_NOTIFY_RUNNING, OUTPUT_KEPT_BYTES, groupMembers } = require('../../../dist/daemon/notify-command.js');

function logger() {
  /** @type {any[]} */
  const lines = [];
  const log = pino({ level: 'info' }, { write: (s) => { lines.push(JSON.parse(s)); } });
  return { log, lines, of: (/** @type {string} */ event) => lines.filter((l) => l.event === event) };
}

const incident = (n = 0) => ({ type: 'standing-still', unit: `s${n}.scope`, session: `s${n}`, atMs: 1, message: 'stands still', observeOnly: false });

/** Alive and not a zombie. */
function alive(pid) {
  try {
    return !/\) Z /.test(fs.readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return false;
  }
}

const waitFor = async (pred, ms) => {
  const end = Date.now() + ms;
  while (!pred()) {
    if (Date.now() > end) return false;
    await new Promise((r) => setTimeout(r, 50));
  }
  return true;
};

test('at the time-out the whole group dies: a grandchild, and one that left the session with setsid', async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'notify-'));
  const l = logger();
  const n = new NotifyCommand(['sh', '-c', 'sleep 60 & echo $! > "$1"; setsid sleep 60 & echo $! > "$2"; sleep 60', 'sh', `${dir}/grandchild`, `${dir}/escaped`], 1, l.log);
  n.run(incident());
  assert.ok(await waitFor(() => fs.existsSync(`${dir}/escaped`) && fs.readFileSync(`${dir}/escaped`, 'utf8').endsWith('\n'), 5000), 'the command wrote its children\'s pids');
  const grandchild = Number(fs.readFileSync(`${dir}/grandchild`, 'utf8'));
  const escaped = Number(fs.readFileSync(`${dir}/escaped`, 'utf8'));
  assert.ok(alive(grandchild) && alive(escaped), 'both run before the time-out');
  await n.settled();
  assert.ok(await waitFor(() => !alive(grandchild), 2000), `the grandchild ${grandchild} is dead`);
  assert.ok(await waitFor(() => !alive(escaped), 2000), `the setsid grandchild ${escaped} is dead`);
  const [done] = l.of('notify-failed');
  assert.equal(done.timedOut, true);
  assert.equal(done.signal, 'SIGKILL');
  assert.ok(done.killed >= 3, `the group's members were killed: ${done.killed}`);
});

test('a command that ended in time but left a child: the child dies at the time-out, not later', async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'notify-'));
  const l = logger();
  const n = new NotifyCommand(['sh', '-c', 'sleep 60 >/dev/null 2>&1 & echo $! > "$1"; exit 0', 'sh', `${dir}/left`], 1, l.log);
  n.run(incident());
  assert.ok(await waitFor(() => fs.existsSync(`${dir}/left`) && fs.readFileSync(`${dir}/left`, 'utf8').endsWith('\n'), 5000));
  const left = Number(fs.readFileSync(`${dir}/left`, 'utf8'));
  await n.settled();
  assert.ok(await waitFor(() => !alive(left), 2000), `the leftover ${left} is dead`);
});

test('its exit status and the first KiB of stdout+stderr are logged; never its argv', async () => {
  const l = logger();
  const secret = 'token-Zq81xv';
  const n = new NotifyCommand(['sh', '-c', 'read line; echo "got $line" | head -c 30; echo; echo oops >&2; sleep 0.5; head -c 3000 /dev/zero | tr "\\0" x; exit 3', 'sh', secret], 10, l.log);
  n.run(incident());
  await n.settled();
  const [failed] = l.of('notify-failed');
  assert.ok(failed, `a notify-failed line: ${JSON.stringify(l.lines)}`);
  assert.equal(failed.exitCode, 3);
  assert.equal(failed.timedOut, false);
  assert.match(failed.output, /^got \{"type":"standing-still"/m, 'it read the incident on its stdin and its stdout is kept');
  assert.match(failed.output, /^oops$/m, 'stderr is kept (two pipes: the test waits 0.5 s before the bulk, so that it comes after)');
  assert.equal(Buffer.byteLength(failed.output), OUTPUT_KEPT_BYTES);
  assert.equal(failed.outputTruncated, true);
  assert.equal(failed.program, 'sh');
  const all = JSON.stringify(l.lines);
  assert.ok(!all.includes(secret) && !all.includes('head -c'), 'no argument in the log');
});

test('a command that succeeds is logged at info with its exit status 0', async () => {
  const l = logger();
  const n = new NotifyCommand(['sh', '-c', 'cat >/dev/null; echo sent'], 10, l.log);
  n.run(incident());
  await n.settled();
  const [done] = l.of('notify-done');
  assert.equal(done.level, 30);
  assert.equal(done.exitCode, 0);
  assert.equal(done.output, 'sent\n');
  assert.equal(l.of('notify-failed').length, 0);
});

test('a program that does not exist: notify-failed with the reason, and the slot is free again', async () => {
  const l = logger();
  const n = new NotifyCommand(['/nonexistent/notifier'], 10, l.log);
  n.run(incident());
  await n.settled();
  const [failed] = l.of('notify-failed');
  assert.equal(failed.errCode, 'ENOENT');
  n.run(incident(1));
  await n.settled();
  assert.equal(l.of('notify-failed').length, 2, 'ran again: its slot was given back');
});

test(`at most ${MAX_NOTIFY_RUNNING} at once: the rest are dropped, counted, and the count logged`, async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'notify-'));
  const l = logger();
  const n = new NotifyCommand(['sh', '-c', 'echo $$ >> "$1"; sleep 1', 'sh', `${dir}/ran`], 10, l.log);
  for (let i = 0; i < MAX_NOTIFY_RUNNING + 3; i++) n.run(incident(i));
  await n.settled();
  assert.equal(fs.readFileSync(`${dir}/ran`, 'utf8').trim().split('\n').length, MAX_NOTIFY_RUNNING, 'forked only up to the bound');
  assert.equal(l.of('notify-done').length, MAX_NOTIFY_RUNNING);
  const dropped = l.of('notify-dropped');
  assert.equal(dropped.reduce((a, d) => a + d.dropped, 0), 3, `the count of dropped is logged: ${JSON.stringify(dropped)}`);
  n.run(incident(99));
  await n.settled();
  assert.equal(l.of('notify-done').length, MAX_NOTIFY_RUNNING + 1, 'runs again once the others ended');
});

test('groupMembers: same session, or the run\'s marker (after setsid); never a zombie', () => {
  const procs = [
    { pid: 10, session: 10, state: 'S', marker: undefined },
    { pid: 11, session: 10, state: 'S', marker: undefined },
    { pid: 12, session: 12, state: 'S', marker: 'run-1' },
    { pid: 13, session: 10, state: 'Z', marker: undefined },
    { pid: 14, session: 7, state: 'S', marker: 'run-2' },
    { pid: 15, session: 7, state: 'R', marker: undefined },
  ];
  assert.deepEqual(groupMembers(procs, 10, 'run-1').map((p) => p.pid), [10, 11, 12]);
});

test('failures are told to sbd\'s metrics (issue 14): a non-zero exit, a program that does not exist, a time-out and each dropped incident; a success is not', async () => {
  const l = logger();
  let failures = 0;
  const count = () => { failures++; };
  const ok = new NotifyCommand(['true'], 5, l.log, undefined, count);
  ok.run(incident());
  await ok.settled();
  assert.equal(failures, 0, 'a success');
  const exit1 = new NotifyCommand(['false'], 5, l.log, undefined, count);
  exit1.run(incident());
  await exit1.settled();
  assert.equal(failures, 1, 'exit status 1');
  const missing = new NotifyCommand(['/nonexistent/notify'], 5, l.log, undefined, count);
  missing.run(incident());
  await missing.settled();
  assert.equal(failures, 2, 'could not run');
  const slow = new NotifyCommand(['sleep', '30'], 0.3, l.log, 1, count);
  slow.run(incident(1));
  slow.run(incident(2)); // one at a time: dropped
  assert.equal(failures, 3, 'the dropped incident, at once');
  await slow.settled();
  assert.equal(failures, 4, 'the time-out');
});
