// @ts-check
'use strict';
// Issue 11, guest test 3: an agent that runs as `node` (as many do) and a build that is `node`
// too. The session record names the agent by pid, so the build is an ordinary command: with no
// room to raise, it is stopped after the grace and the agent lives. (Before, the build was the
// agent's "namesake", never a candidate: nothing-to-stop, and the session stood still forever.)
const test = require('node:test');
const assert = require('node:assert/strict');
const path = require('node:path');
const { labOnly, waitFor } = require('./helpers');
const { startSbd, incidentCollector, runSession, stopSessions, alive } = require('./sbd-helpers');

test('a node agent\'s node build with no room is stopped; the agent and its MCP server live', labOnly, async (t) => {
  // no room: the ceiling is the session's own brake; a short grace
  await startSbd({ detector: { graceS: 10 }, raise: { ceiling: '128M' }, stop: { termToKillS: 5 } });
  const inc = await incidentCollector();
  t.after(() => { inc.close(); stopSessions('node1'); });
  const s = runSession('node1', ['--memory-high', '128M', '--memory-max', '1G', '--swap-max', '0'],
    [process.execPath, path.join(__dirname, 'fixtures/agent.js'), process.execPath, path.join(__dirname, 'fixtures/hog.js'), '600', '300']);
  const pids = await waitFor(() => {
    const line = s.output().split('\n').find((l) => l.startsWith('{"agent"'));
    return line && JSON.parse(line);
  }, 60_000, { what: 'the node agent to report its pids' });

  const noRoom = await inc.wait('node1', 'no-room', 120_000);
  assert.match(noRoom.message, /configured ceiling/);
  const willStop = await inc.wait('node1', 'will-stop', 60_000);
  assert.equal(willStop.name, 'node', 'the build is named by its program, node');
  assert.deepEqual(willStop.pids, [pids.build], 'exactly the build');
  assert.ok(!willStop.protectedPids.includes(pids.build), 'the agent\'s namesake is no longer protected');
  assert.ok(willStop.protectedPids.includes(pids.agent) && willStop.protectedPids.includes(pids.mcp), 'the agent and its MCP server are');
  assert.deepEqual(inc.of('node1', 'nothing-to-stop'), [], 'never "nothing to stop"');
  const stopped = await inc.wait('node1', 'subtree-stopped', 30_000);
  assert.deepEqual([...stopped.terminated, ...stopped.killed], [pids.build]);

  await waitFor(() => !alive(pids.build), 10_000, { what: 'the build to be gone' });
  assert.ok(alive(pids.agent), `the agent (${pids.agent}) still runs`);
  assert.ok(alive(pids.mcp), `the MCP server (${pids.mcp}) still runs`);
  assert.equal(s.child.exitCode, null, 'sbctl run (the session) still runs');
});
