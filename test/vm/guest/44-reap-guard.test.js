// @ts-check
'use strict';
// Issue 12, fault 5: `sbctl reap --checkout` must never signal its caller or the caller's
// ancestors (measured before: `cd ck && sbctl reap --checkout ck; echo done` never printed done),
// and refuses `/`, the home directory and a path that does not exist, signalling nothing.
const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { spawn } = require('node:child_process');
const { labOnly, waitFor } = require('./helpers');
const { alive, sbctl } = require('./sbd-helpers');

/** A directory with an `sbctl` on PATH, as a user has it (a wrapper that execs node). */
function sbctlOnPath() {
  const bin = fs.mkdtempSync('/tmp/sbctl-bin-');
  fs.writeFileSync(path.join(bin, 'sbctl'), `#!/bin/sh\nexec ${process.execPath} /mnt/proj/dist/cli/main.js "$@"\n`, { mode: 0o755 });
  return bin;
}

/** A bash reading commands from a pipe; its output collected. */
function shell(bin) {
  const sh = spawn('bash', [], { stdio: ['pipe', 'pipe', 'pipe'], env: { ...process.env, PATH: `${bin}:${process.env.PATH}` } });
  let out = '';
  sh.stdout?.on('data', (d) => { out += d; });
  sh.stderr?.on('data', (d) => { out += d; });
  return { sh, output: () => out, run: (line) => sh.stdin?.write(`${line}\n`) };
}

/** A process working inside DIR (its cwd), for reap to find. */
const holder = (dir) => spawn('sleep', ['600'], { cwd: dir, stdio: 'ignore' });

test('the measured line: cd ck && sbctl reap --checkout ck; echo done prints done, the shell lives, the holder is stopped, the shell is named as spared', labOnly, async (t) => {
  const ck = fs.mkdtempSync('/tmp/ck-');
  const h = holder(ck);
  const s = shell(sbctlOnPath());
  t.after(() => { s.sh.kill('SIGKILL'); h.kill('SIGKILL'); });
  s.run(`cd ${ck} && sbctl reap --checkout ${ck} --timeout 5s; echo done`);
  await waitFor(() => /^done$/m.test(s.output()) || s.sh.exitCode !== null || s.sh.signalCode !== null, 60_000, { what: 'done, or the shell to die' });
  assert.equal(s.sh.signalCode, null, `the shell was killed (${s.sh.signalCode}); its output:\n${s.output()}`);
  assert.match(s.output(), /^done$/m);
  assert.ok(alive(s.sh.pid ?? 0), 'the shell is alive');
  await waitFor(() => !alive(h.pid ?? 0), 10_000, { what: 'the holder to be gone' });
  assert.match(s.output(), /^stopped 1 process working inside /m);
  assert.match(s.output(), new RegExp(`^${s.sh.pid}\\s+bash\\s.*spared: sbctl's caller`, 'm'));
  s.run('echo "still here $$"');
  await waitFor(() => s.output().includes(`still here ${s.sh.pid}`), 10_000, { what: 'the shell to answer again' });
});

test('two shells deep, --json: both ancestors spared and said why, the holder stopped', labOnly, async (t) => {
  const ck = fs.mkdtempSync('/tmp/ck-');
  const h = holder(ck);
  const s = shell(sbctlOnPath());
  t.after(() => { s.sh.kill('SIGKILL'); h.kill('SIGKILL'); });
  // (two commands in bash -c: a single one would be exec'd)
  s.run(`cd ${ck} && bash -c 'sbctl reap --checkout . --timeout 5s --json; echo "inner $$"'; echo done`);
  await waitFor(() => /^done$/m.test(s.output()) || s.sh.exitCode !== null || s.sh.signalCode !== null, 60_000, { what: 'done, or the shell to die' });
  assert.equal(s.sh.signalCode, null, `the shell was killed; its output:\n${s.output()}`);
  const inner = Number(/^inner (\d+)$/m.exec(s.output())?.[1]);
  assert.ok(inner > 0, `the inner shell went on: ${s.output()}`);
  const json = s.output().slice(s.output().indexOf('['), s.output().lastIndexOf(']') + 1);
  const rows = JSON.parse(json);
  const byPid = Object.fromEntries(rows.map((r) => [r.pid, r]));
  assert.equal(byPid[inner]?.outcome, 'spared');
  assert.equal(byPid[inner]?.why, "sbctl's caller");
  assert.equal(byPid[s.sh.pid ?? 0]?.outcome, 'spared');
  assert.equal(byPid[s.sh.pid ?? 0]?.why, "an ancestor of sbctl's caller");
  assert.equal(byPid[h.pid ?? 0]?.outcome, 'terminated');
});

test('refused, nothing signalled: /, the home directory, a directory holding it, a path that does not exist', labOnly, async (t) => {
  const home = os.homedir();
  const inHome = holder(home);
  const inRoot = holder('/');
  t.after(() => { inHome.kill('SIGKILL'); inRoot.kill('SIGKILL'); });
  await new Promise((r) => setTimeout(r, 300));
  // `/` as a dry run first: today's code lists every process of the user there (a real run kills them).
  for (const [dir, dry, why] of [['/', ['--dry-run'], /the root directory/], [home, [], /your home directory/], [path.dirname(home), [], /holds your home directory/]]) {
    const r = sbctl('reap', '--checkout', dir, ...dry);
    assert.equal(r.status, 2, `reap --checkout ${dir} ${dry.join(' ')}: exit 2, got ${r.status}; stdout: ${r.stdout}`);
    assert.match(r.stderr, why);
    assert.match(r.stderr, /refused/);
    assert.equal(r.stdout, '', 'nothing listed, nothing stopped');
  }
  const missing = sbctl('reap', '--checkout', '/tmp/no-such-checkout');
  assert.equal(missing.status, 2);
  assert.match(missing.stderr, /\/tmp\/no-such-checkout: no such directory/);
  assert.ok(alive(inHome.pid ?? 0) && alive(inRoot.pid ?? 0), 'nothing signalled');
});
