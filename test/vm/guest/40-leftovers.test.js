// @ts-check
'use strict';
// Issue 6: what a session leaves behind is stopped when its agent exits; sbctl holders and
// sbctl reap --checkout; other users' processes (root's, set up by 40-leftovers.root.sh) are
// never signalled, even inside the same checkout or carrying a copied marker.
const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const { spawn } = require('node:child_process');
const { labOnly, waitFor } = require('./helpers');
const { startSbd, incidentCollector, runSession, alive, sbctl } = require('./sbd-helpers');

const rootPid = (name) => Number(fs.readFileSync(`/tmp/root-${name}.pid`, 'utf8'));

const AGENT = `
import json, os, signal, subprocess, sys, time
null = subprocess.DEVNULL
setsid = subprocess.Popen(["setsid", "sleep", "600"], stdout=null, stderr=null)
server = subprocess.Popen(["nohup", sys.executable, "-c", "import socket, time; s = socket.socket(); s.bind(('127.0.0.1', 0)); s.listen(); time.sleep(600)"], stdout=null, stderr=null)
moved = subprocess.Popen(["systemd-run", "--user", "--scope", "--quiet", "--unit", f"moved-{os.getpid()}", "sleep", "600"], stdout=null, stderr=null)
stubborn = subprocess.Popen([sys.executable, "-c", "import signal, time; signal.signal(signal.SIGTERM, signal.SIG_IGN); time.sleep(600)"])
time.sleep(2)
# the agent quits only once the stubborn one ignores SIGTERM (SigIgn bit 15 in its status): in a
# loaded guest its python took longer than the 3 s the agent gave it, and SIGTERM ended it (CI)
def ignores_term(pid):
    with open(f"/proc/{pid}/status") as f:
        return any(l.startswith("SigIgn:") and int(l.split()[1], 16) & (1 << (signal.SIGTERM - 1)) for l in f)
while not ignores_term(stubborn.pid):
    time.sleep(0.1)
print(json.dumps({"setsid": setsid.pid, "server": server.pid, "moved": moved.pid, "stubborn": stubborn.pid}), flush=True)
time.sleep(1)
print(json.dumps({"exitAtMs": time.time() * 1000}), flush=True)
os._exit(0)  # the agent quits and leaves them all running
`;

test('when the agent exits, what it left is stopped: setsid, nohup, moved to another unit; a SIGTERM-ignorer is SIGKILLed after 10 s', labOnly, async (t) => {
  await startSbd({});
  const inc = await incidentCollector();
  t.after(() => inc.close());
  const s = runSession('left1', [], ['python3', '-c', AGENT]);
  const pids = await waitFor(() => {
    const line = s.output().split('\n').find((l) => l.startsWith('{"setsid"'));
    return line && JSON.parse(line);
  }, 30_000, { what: 'the agent to report its pids' });
  const exitedAt = await waitFor(() => {
    const line = s.output().split('\n').find((l) => l.startsWith('{"exitAtMs"'));
    return line && JSON.parse(line).exitAtMs;
  }, 20_000, { what: 'the agent to exit' });
  const fromCgroup = fs.readFileSync(`/proc/${pids.moved}/cgroup`, 'utf8');
  assert.match(fromCgroup, /moved-\d+\.scope/, 'the moved process really lives in another unit');
  const reaped = await inc.wait('left1', 'procs-reaped', 40_000);
  const outcome = Object.fromEntries(reaped.procs.map((p) => [p.pid, p.outcome]));
  assert.equal(outcome[pids.setsid], 'terminated');
  assert.equal(outcome[pids.server], 'terminated');
  assert.equal(outcome[pids.moved], 'terminated');
  assert.equal(outcome[pids.stubborn], 'killed');
  assert.ok(reaped.atMs - exitedAt >= 9_000, `the SIGTERM-ignorer got its 10 s (${reaped.atMs - exitedAt} ms)`);
  for (const p of reaped.procs) {
    assert.ok(typeof p.program === 'string' && typeof p.rssBytes === 'number' && typeof p.ageS === 'number', 'pid, program, RSS, age');
  }
  assert.ok(!JSON.stringify(reaped).includes('socket'), 'no arguments in the incident');
  for (const pid of Object.values(pids)) assert.equal(alive(pid), false, `${pid} is gone`);
  assert.ok(alive(rootPid('marked')), "root's process with a copied marker is never signalled");
});

test('sbctl holders names a shell in a checkout; after sbctl reap --checkout it says free; root\'s process there is left alone', labOnly, async () => {
  const dir = '/tmp/shared-checkout';
  // (two commands: bash -c with a single one would exec it and be gone)
  const shell = spawn('bash', ['-c', 'sleep 600; true'], { cwd: dir, stdio: 'ignore' });
  await new Promise((r) => setTimeout(r, 500));
  const held = sbctl('holders', dir, '--json');
  assert.equal(held.status, 1, 'held: exit 1');
  const listed = JSON.parse(held.stdout);
  assert.ok(listed.holders.some((h) => h.pid === shell.pid && h.program === 'bash' && h.how === 'cwd'));
  assert.ok(!listed.holders.some((h) => h.pid === rootPid('in-checkout')), "another user's process is not ours to list");
  assert.match(sbctl('holders', dir).stdout, /stop them with: sbctl reap --checkout \/tmp\/shared-checkout/);
  const reaped = sbctl('reap', '--checkout', dir, '--timeout', '5s');
  assert.equal(reaped.status, 0, reaped.stderr);
  assert.match(reaped.stdout, /^stopped \d+ process(es)? working inside \/tmp\/shared-checkout:/);
  assert.match(reaped.stdout, /bash\s.*terminated/);
  assert.equal(sbctl('holders', dir).status, 0, 'free now: exit 0');
  assert.ok(alive(rootPid('in-checkout')), "root's process in the same checkout is never signalled");
  assert.match(sbctl('reap', '--checkout', dir).stdout, /^nothing to stop/);
  assert.equal(sbctl('reap', '--checkout', '/tmp/no-such-checkout').status, 2);
});

test('a session started with --no-reap is told about, not reaped', labOnly, async (t) => {
  await startSbd({});
  const inc = await incidentCollector();
  t.after(() => inc.close());
  const agent = 'import subprocess, os, time\np = subprocess.Popen(["setsid", "sleep", "600"])\nprint(p.pid, flush=True)\ntime.sleep(1)\nos._exit(0)\n';
  const s = runSession('noreap1', ['--no-reap'], ['python3', '-c', agent]);
  // python3's start through sbctl run took over 30 s in a TCG guest on a loaded host (CI, session 10)
  const pid = await waitFor(() => Number(s.output().split('\n')[0]) || 0, 90_000, { what: 'the leftover pid' });
  const told = await inc.wait('noreap1', 'leftovers', 30_000);
  assert.match(told.message, /left 1 process running \(sleep \d+\); not stopped: the session was started with --no-reap/);
  assert.ok(alive(pid), 'left alone');
  process.kill(pid, 'SIGKILL');
});
