// @ts-check
'use strict';
// The freeze watch's shell on this host: real processes as the agent and its servers, a cgroup
// directory of plain files (cpu.stat, cgroup.procs) standing in for the session's.
const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { spawn } = require('node:child_process');
const { FreezeWatch } = require('../../../dist/daemon/freeze-watch.js');
const { parseConfig } = require('../../../dist/config/load.js');
const { readProcess } = require('../../../dist/proc/table.js');
const { waitFor } = require('../../support/proc.js');

/** A child process, killed when the test ends. */
function child(t, argv) {
  const c = spawn(argv[0], argv.slice(1), { stdio: ['ignore', 'pipe', 'ignore'] });
  t.after(() => c.kill('SIGKILL'));
  return c;
}

/** A session of `agent` with a stand-in cgroup directory listing `pids`, in `parent` (a temporary directory without cpu.stat unless given). */
function session(agent, pids, heartbeat, parent = os.tmpdir()) {
  const dir = fs.mkdtempSync(path.join(parent, 'sb-freeze-'));
  fs.writeFileSync(path.join(dir, 'cpu.stat'), 'usage_usec 0\nuser_usec 0\nsystem_usec 0\n');
  fs.writeFileSync(path.join(dir, 'cgroup.procs'), pids.map((p) => `${p}\n`).join(''));
  const info = readProcess(agent.pid);
  return { unit: 't.scope', id: 't', cgroupDir: dir, agentPid: agent.pid, agentStartTicks: info?.startTicks, heartbeat };
}

/** A FreezeWatch over one session; `told` collects its incidents. */
function watch(t, freeze, s) {
  const told = [];
  const w = new FreezeWatch(parseConfig({ freeze }, 'test'), { tell: (i) => told.push(i) }, () => [s]);
  t.after(() => w.stop());
  return told;
}

// Any CPU at all counts as busy: this host may be loaded (a spinning child measured 3-48 % of a
// core next to two emulated guests); the sleeping agent of the build uses none.
const FAST = { checkS: 1, peggedForS: 3, peggedCpuShare: 0.01, missingAfterS: 600, silentAfterS: 600 };

test('a busy build under an idle agent is not pegged: the agent\'s own CPU counts, not the cgroup\'s', async (t) => {
  const agent = child(t, ['sleep', '30']);
  const s = session(agent, [agent.pid]);
  const told = watch(t, FAST, s);
  // the cgroup burns a whole core for 5 s (a build); the agent sleeps
  const t0 = Date.now();
  while (Date.now() - t0 < 5000) {
    fs.writeFileSync(path.join(s.cgroupDir, 'cpu.stat'), `usage_usec ${(Date.now() - t0) * 1000}\nuser_usec 0\nsystem_usec 0\n`);
    await new Promise((r) => setTimeout(r, 50));
  }
  assert.deepEqual(told.map((i) => i.message), []);
});

test('an agent that spins itself is pegged, the message naming its pid and CPU', async (t) => {
  const agent = child(t, [process.execPath, '-e', 'for (;;) {}']);
  const s = session(agent, [agent.pid]);
  const told = watch(t, FAST, s);
  await waitFor('pegged', () => told.some((i) => i.type === 'pegged'), 15_000);
  const i = told.find((x) => x.type === 'pegged');
  assert.equal(i.agentPid, agent.pid);
  assert.match(i.message, new RegExp(`^session t is pegged: its agent \\(node, pid ${agent.pid}\\) has spun at \\d+ % of a core for \\d s without writing its heartbeat \\(it has no heartbeat file\\); agent CPU \\d+\\.\\d min in all; nothing open\\. What to do: `));
});

/** An agent that starts an MCP server and a language server (their argv hold a token) and prints their pids. */
const SERVERS = `
const { spawn } = require('node:child_process');
const s = (name) => spawn(process.execPath, ['-e', 'setTimeout(() => {}, 60000)', name, '--token=sekrit-123'], { stdio: 'ignore' }).pid;
console.log(JSON.stringify([s('mcp-server-filesystem'), s('pyright-langserver')]));
setTimeout(() => {}, 60000);
`;

async function withServers(t, first) {
  const agent = child(t, [process.execPath, '-e', SERVERS]);
  let out = '';
  agent.stdout?.on('data', (d) => { out += d; });
  await waitFor('the servers', () => out.includes(']'), 10_000);
  const beat = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'sb-beat-')), 'beat');
  fs.writeFileSync(beat, `${first}\n`);
  const hourAgo = new Date(Date.now() - 3600_000);
  fs.utimesSync(beat, hourAgo, hourAgo);
  return session(agent, [agent.pid, ...JSON.parse(out)], beat);
}

test('an agent beside an MCP and a language server that claims work and stopped writing is silent, not missing', async (t) => {
  const s = await withServers(t, 'working');
  const told = watch(t, { ...FAST, missingAfterS: 60, silentAfterS: 120 }, s);
  await waitFor('an incident', () => told.length > 0, 5000);
  await new Promise((r) => setTimeout(r, 1500));
  assert.deepEqual(told.map((i) => [i.type, i.open]), [['silent', ['silent']]]);
  assert.match(told[0].message, /^session t is silent: its agent \(node, pid \d+\) claims to be working but has not written its heartbeat for 60 min; agent CPU [\d.]+ min in all; nothing open \(1 MCP server and 1 language server not counted\)\. What to do: /);
  assert.equal(told[0].heartbeatAgeS >= 3600, true);
  assert.doesNotMatch(JSON.stringify(told), /sekrit|--token/);
});

test('the same agent not claiming work is missing, not silent', async (t) => {
  const s = await withServers(t, 'idle');
  const told = watch(t, { ...FAST, missingAfterS: 60, silentAfterS: 120 }, s);
  await waitFor('an incident', () => told.length > 0, 5000);
  await new Promise((r) => setTimeout(r, 1500));
  assert.deepEqual(told.map((i) => [i.type, i.open]), [['missing', ['missing']]]);
  assert.match(told[0].message, /^session t is missing: its agent \(node, pid \d+\) is alive but has not renewed its heartbeat for 60 min; agent CPU [\d.]+ min in all; nothing open \(1 MCP server and 1 language server not counted\)\. What to do: /);
});

test("one session whose check throws is told once a round and skipped; the others are still checked", (t) => {
  t.mock.timers.enable({ apis: ['setInterval'] });
  const agent = child(t, ['sleep', '30']);
  const good = session(agent, [agent.pid]);
  const bad = { ...session(agent, [agent.pid]), unit: 'bad.scope', get agentPid() { throw new Error('EMFILE: too many open files, open \'/proc/1/stat\''); } };
  const errors = [];
  const checked = [];
  const w = new FreezeWatch(parseConfig({ freeze: FAST }, 'test'), { tell: () => {} }, () => [bad, good], (unit, err, failed) => errors.push([unit, err.message, failed]));
  const step = w.step.bind(w); // each session's step in the round (check's too)
  w.step = (s) => { checked.push(s.unit); return step(s); };
  t.after(() => w.stop());
  t.mock.timers.tick(1000);
  t.mock.timers.tick(1000);
  assert.deepEqual(checked, ['bad.scope', 't.scope', 'bad.scope', 't.scope']);
  assert.deepEqual(errors, [['bad.scope', "EMFILE: too many open files, open '/proc/1/stat'", 1], ['bad.scope', "EMFILE: too many open files, open '/proc/1/stat'", 1]]);
});

/** A stand-in for the sessions' slice: a directory whose cpu.stat says `usageUs()`, written every 50 ms. */
function parentSlice(t, usageUs) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sb-freeze-slice-'));
  const write = () => fs.writeFileSync(path.join(dir, 'cpu.stat'), `usage_usec ${Math.round(usageUs())}\nuser_usec 0\nsystem_usec 0\n`);
  write();
  const timer = setInterval(write, 50);
  t.after(() => clearInterval(timer));
  return dir;
}

test('an agent that spins under a parent that says it was calm is not read, so not told; once the parent is busy it is told pegged', async (t) => {
  // The parent's cpu.stat is a stand-in that lies (calm while its agent spins): only a watch that
  // skips the agent's read stays silent. Then it says a whole core, and the agent is read again.
  const t0 = Date.now();
  let busyFrom = Infinity;
  const slice = parentSlice(t, () => Math.max(0, Date.now() - busyFrom) * 1000);
  const agent = child(t, [process.execPath, '-e', 'for (;;) {}']);
  const told = watch(t, FAST, session(agent, [agent.pid], undefined, slice));
  // FAST: checked each second, pegged after 3 s at 1 %: read each round, it would be told by about 5 s
  await new Promise((r) => setTimeout(r, 7000));
  assert.deepEqual(told.map((i) => i.type), []);
  busyFrom = Date.now();
  await waitFor('pegged', () => told.some((i) => i.type === 'pegged'), 15_000);
  assert.ok(Date.now() - t0 >= 7000);
});

test('under a calm parent, a session with a heartbeat is still read: missing is told', async (t) => {
  const slice = parentSlice(t, () => 0);
  const agent = child(t, ['sleep', '30']);
  const beat = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'sb-beat-')), 'beat');
  fs.writeFileSync(beat, 'idle\n');
  const hourAgo = new Date(Date.now() - 3600_000);
  fs.utimesSync(beat, hourAgo, hourAgo);
  const told = watch(t, { ...FAST, missingAfterS: 60 }, session(agent, [agent.pid], beat, slice));
  await waitFor('missing', () => told.some((i) => i.type === 'missing'), 8000);
});

test('a parent whose cpu.stat cannot be parsed answers for nobody: each agent is read and told', async (t) => {
  const slice = fs.mkdtempSync(path.join(os.tmpdir(), 'sb-freeze-slice-'));
  fs.writeFileSync(path.join(slice, 'cpu.stat'), 'usage_usec lots\n');
  const agent = child(t, [process.execPath, '-e', 'for (;;) {}']);
  const told = watch(t, FAST, session(agent, [agent.pid], undefined, slice));
  await waitFor('pegged', () => told.some((i) => i.type === 'pegged'), 15_000);
});

test('the open signals are saved as they change, and a restarted watch given them tells the recovery of what its predecessor told', (t) => {
  const agent = child(t, ['sleep', '30']);
  const beat = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'sb-beat-')), 'beat');
  fs.writeFileSync(beat, 'idle\n');
  const old = new Date(Date.now() - 100_000);
  fs.utimesSync(beat, old, old);
  const s = session(agent, [agent.pid], beat);
  const cfg = parseConfig({ freeze: { checkS: 600, missingAfterS: 10 } }, 'test');
  const told = [];
  const saves = [];
  const order = [];
  const watchOf = () => {
    const w = new FreezeWatch(cfg, { tell: (i) => { told.push(i); order.push(`tell ${i.type}`); } }, () => [s], undefined, (session, open) => { saves.push([session.unit, open]); order.push('save'); }, () => order.push('commit'));
    t.after(() => w.stop());
    return w;
  };
  const first = watchOf();
  first.check(s);
  assert.deepEqual(told.map((i) => i.type), ['missing']);
  assert.deepEqual(saves, [['t.scope', { open: ['missing'] }]]);
  first.check(s);
  assert.equal(saves.length, 1, 'still missing: nothing saved again');
  first.stop();
  // sbd restarts; the heartbeat is renewed before the new one's first check
  const now = new Date();
  fs.utimesSync(beat, now, now);
  const second = watchOf();
  second.restore('t.scope', saves[0][1], true);
  second.check(s);
  assert.deepEqual(told.map((i) => i.type), ['missing', 'recovered']);
  assert.deepEqual(saves.at(-1), ['t.scope', undefined], 'nothing open: the saved part goes');
  assert.deepEqual(order, ['save', 'commit', 'tell missing', 'save', 'commit', 'tell recovered'], 'durable before told; a check that saved nothing commits nothing');
  // a round (sweep) of a fresh watch over a stale heartbeat: one commit for the round, before the telling
  fs.utimesSync(beat, old, old);
  const third = watchOf();
  order.length = 0;
  third.sweep();
  assert.deepEqual(order, ['save', 'commit', 'tell missing']);
  third.sweep();
  assert.deepEqual(order, ['save', 'commit', 'tell missing'], 'a round that saved nothing commits nothing');
});
