// @ts-check
'use strict';
const test = require('node:test');
const assert = require('node:assert/strict');
const fc = require('fast-check');
const { chooseVictim, isMcp, isGit } = require('../../../dist/victim/choose.js');

const MiB = 2 ** 20;
const p = (pid, ppid, comm, rssMiB, argv = [comm]) => ({ pid, ppid, comm, rssBytes: rssMiB * MiB, argv });

// An agent (claude, pid 100, parent outside) with: a build (make -> cc1plus x2), an MCP server
// (node .../server-filesystem mcp), a git fetch (git -> git-remote-https), a test run.
const session = [
  p(100, 1, 'claude', 300, ['claude', '--mcp-config', '/home/u/mcp.json']),
  p(200, 100, 'make', 5), p(201, 200, 'cc1plus', 900), p(202, 200, 'cc1plus', 700),
  p(300, 100, 'node', 80, ['node', '/opt/mcp/server.js', '--stdio']), p(301, 300, 'rg', 40),
  p(400, 100, 'git', 10, ['git', 'fetch']), p(401, 400, 'git-remote-http', 20),
  p(500, 100, 'npm', 60), p(501, 500, 'node', 400, ['node', 'jest', '--token=SECRET']),
];

test('the heaviest whole subtree under the agent wins, named by its heaviest process', () => {
  const c = chooseVictim(session, 100, undefined);
  assert.equal(c.victim?.rootPid, 200);
  assert.equal(c.victim?.name, 'cc1plus');
  assert.equal(c.victim?.rssBytes, 1605 * MiB);
  assert.deepEqual(c.candidates.map((x) => x.rootPid), [200, 500]);
});

test('signals go deepest first', () => {
  assert.deepEqual(chooseVictim(session, 100, undefined).victim?.pids, [202, 201, 200]);
});

test('never the agent; its MCP config in its own argv does not protect its children', () => {
  const c = chooseVictim(session, 100, undefined);
  assert.ok(c.protectedPids.includes(100));
  assert.ok(!c.candidates.some((x) => x.pids.includes(100)));
  assert.equal(c.agentPid, 100);
});

test('never an MCP server nor anything under it', () => {
  const c = chooseVictim(session, 100, undefined);
  assert.ok(c.protectedPids.includes(300) && c.protectedPids.includes(301));
  for (const x of c.candidates) assert.ok(!x.pids.includes(300) && !x.pids.includes(301));
  assert.ok(isMcp(p(1, 0, 'x', 0, ['npx', '@modelcontextprotocol/server-github'])));
  assert.ok(isMcp(p(1, 0, 'x', 0, ['uvx', 'mcp-server-fetch'])));
  assert.ok(!isMcp(p(1, 0, 'x', 0, ['grep', 'mcpherson'])), 'mcp must be a word');
});

test('git and what runs under it are spared; a tree that is only git is no candidate', () => {
  const c = chooseVictim(session, 100, undefined);
  assert.ok(!c.candidates.some((x) => x.rootPid === 400), 'git fetch alone is spared whole');
  const mixed = [p(100, 1, 'claude', 10), p(600, 100, 'bash', 1), p(601, 600, 'git', 5), p(602, 601, 'less', 1), p(603, 600, 'python3', 500)];
  const m = chooseVictim(mixed, 100, undefined);
  assert.deepEqual(m.victim?.pids, [603, 600]);
  assert.deepEqual(m.victim?.sparedGit, [601, 602]);
  assert.ok(isGit(p(1, 0, 'git-lfs', 0)));
});

test('an inferred agent: another process with its program name is not a command; its children are', () => {
  const procs = [p(100, 1, 'claude', 300), p(110, 100, 'claude', 200), p(111, 110, 'python3', 50)];
  const c = chooseVictim(procs, undefined, 100);
  assert.equal(c.agentKnown, false);
  assert.deepEqual(c.candidates.map((x) => x.rootPid), [111]);
  assert.ok(c.protectedPids.includes(110));
  // a record's pid that is not in the cgroup (the agent exited) is no known agent either
  assert.equal(chooseVictim(procs, 4242, 100).agentKnown, false);
  assert.deepEqual(chooseVictim(procs, 4242, 100).candidates.map((x) => x.rootPid), [111]);
});

// Issue 11, case 3: a `node` agent whose build is `node` too (webpack, tsc, jest, vite).
const nodeAgent = [
  p(100, 1, 'node', 150, ['node', '/opt/agent/cli.js']),
  p(200, 100, 'node', 60, ['node', 'node_modules/.bin/webpack']), p(201, 200, 'node', 1500, ['node', 'worker.js']),
  p(300, 100, 'node', 80, ['node', '/opt/mcp/server.js']),
];

test('a known agent: processes with its program name are ordinary candidates', () => {
  const c = chooseVictim(nodeAgent, 100, 100);
  assert.equal(c.agentKnown, true);
  assert.equal(c.agentPid, 100);
  assert.equal(c.victim?.rootPid, 200, 'the node build is the victim');
  assert.deepEqual(c.victim?.pids, [201, 200]);
  assert.equal(c.victim?.name, 'node');
  assert.deepEqual(c.protectedPids, [100, 300], 'only the agent and the MCP server are protected');
});

test('a known agent below a wrapper: neither the agent nor the wrapper above it is stopped', () => {
  // a wrapper (bash) started the agent; the record names the agent
  const procs = [p(90, 1, 'bash', 4), ...nodeAgent.map((x) => (x.pid === 100 ? { ...x, ppid: 90 } : x))];
  const c = chooseVictim(procs, 100, 90);
  assert.deepEqual(c.protectedPids, [90, 100, 300]);
  assert.ok(!c.candidates.some((x) => x.pids.includes(100) || x.pids.includes(90)), 'never the agent, nor its wrapper');
  assert.deepEqual(c.victim?.pids, [201, 200]);
});

test('without a known agent, the root of the tree is the agent; other roots are commands', () => {
  const procs = [p(100, 1, 'bash', 5), p(101, 100, 'vim', 30), p(700, 1, 'node', 400, ['node', 'devserver.js'])];
  const c = chooseVictim(procs, undefined, 100);
  assert.equal(c.agentPid, 100);
  assert.equal(c.victim?.rootPid, 700);
  assert.deepEqual(chooseVictim([], undefined, undefined).victim, undefined);
});

test('the result never carries arguments', () => {
  const json = JSON.stringify(chooseVictim(session, 100, undefined));
  assert.ok(!json.includes('SECRET'));
  assert.ok(!json.includes('jest'));
});

// Generated trees: pids 2..n+1, each with a parent among the earlier ones or outside (1).
const COMMS = ['make', 'cc1plus', 'node', 'git', 'git-remote-https', 'python3', 'bash', 'rg', 'claude'];
const tree = fc.integer({ min: 1, max: 40 }).chain((n) =>
  fc.tuple(
    ...Array.from({ length: n }, (_, i) =>
      fc.record({
        parent: fc.integer({ min: 0, max: i }), // 0: outside the cgroup
        comm: fc.constantFrom(...COMMS),
        rss: fc.nat(2000),
        mcp: fc.boolean().map((b) => b && Math.random() < 0.3),
      }),
    ),
  ).map((rows) => rows.map((r, i) => p(i + 2, r.parent === 0 ? 1 : r.parent + 1, r.comm, r.rss, r.mcp ? [r.comm, 'mcp-server', '--token=T0KEN'] : [r.comm, '--token=T0KEN']))),
);

test('property: over generated trees the choice keeps every rule', () => {
  fc.assert(fc.property(tree, (procs) => {
    const agent = procs[0];
    const c = chooseVictim(procs, agent.pid, undefined);
    const byPid = new Map(procs.map((x) => [x.pid, x]));
    const under = (pid, pred) => {
      for (let q = byPid.get(pid); q; q = byPid.get(q.ppid)) if (pred(q)) return true;
      return false;
    };
    for (const x of c.candidates) {
      for (const pid of x.pids) {
        assert.ok(byPid.has(pid), 'only pids of this cgroup');
        assert.notEqual(pid, agent.pid, 'never the agent');
        assert.ok(!under(pid, (q) => q.pid !== agent.pid && /(^|[^A-Za-z0-9])mcp([^A-Za-z0-9]|$)/.test(q.argv.join(' '))), 'never under an MCP server');
        // (the agent itself is no command, so a git-named agent spares nobody)
        assert.ok(!under(pid, (q) => q.comm.startsWith('git') && q.pid !== agent.pid), 'never a git pid or under git');
      }
      assert.equal(x.rssBytes, x.pids.reduce((s, pid) => s + byPid.get(pid).rssBytes, 0));
      const top = Math.max(...x.pids.map((pid) => byPid.get(pid).rssBytes));
      assert.ok(x.pids.some((pid) => byPid.get(pid).comm === x.name && byPid.get(pid).rssBytes === top), 'named by its heaviest process');
      assert.ok(!JSON.stringify(x).includes('T0KEN'), 'no arguments');
      // deepest first: no pid comes after one of its own descendants
      const pos = new Map(x.pids.map((pid, i) => [pid, i]));
      for (const pid of x.pids) {
        const parent = byPid.get(pid).ppid;
        if (pos.has(parent)) assert.ok(pos.get(parent) > pos.get(pid), 'a parent after its child');
      }
    }
    if (c.victim) assert.ok(c.candidates.every((x) => x.rssBytes <= c.victim.rssBytes), 'the heaviest subtree wins');
    // a known agent protects itself and MCP trees only: no process for its program name
    for (const pid of c.protectedPids) {
      assert.ok(pid === agent.pid || under(pid, (q) => q.pid !== agent.pid && /(^|[^A-Za-z0-9])mcp([^A-Za-z0-9]|$)/.test(q.argv.join(' '))), `${pid} protected without cause`);
    }
  }), { numRuns: 500 });
});
