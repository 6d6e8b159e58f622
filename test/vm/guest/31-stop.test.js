// @ts-check
'use strict';
// Issue 5, scenario 2: no room to raise; after the grace the biggest command's subtree is
// stopped, while the agent, an MCP server and a git process of the same session keep running.
const test = require('node:test');
const assert = require('node:assert/strict');
const path = require('node:path');
const { labOnly, waitFor, readCgroupFile } = require('./helpers');
const { spawn } = require('node:child_process');
const { startSbd, incidentCollector, startAgent, stopSessions, cgroupOf, alive, sbctl } = require('./sbd-helpers');

const MiB = 2 ** 20;

test('no room: the biggest command is stopped; agent, MCP server and git live on', labOnly, async (t) => {
  await startSbd({ detector: { graceS: 10 }, raise: { ceiling: '64M' }, stop: { termToKillS: 5 } });
  const inc = await incidentCollector();
  // sbctl watch --json, as a tool would use it
  const watcher = spawn(process.execPath, [path.resolve(__dirname, '../../../dist/cli/main.js'), 'watch', '--json'], { stdio: ['ignore', 'pipe', 'inherit'] });
  let watched = '';
  watcher.stdout.on('data', (d) => { watched += d; });
  t.after(() => { inc.close(); watcher.kill(); stopSessions('stop1'); });
  const { pids } = await startAgent('stop1', 400, 200);

  const noRoom = await inc.wait('stop1', 'no-room', 60_000);
  assert.match(noRoom.message, /configured ceiling/);
  const willStop = await inc.wait('stop1', 'will-stop', 60_000);
  assert.equal(willStop.name, 'python3');
  assert.deepEqual([...willStop.pids].sort(), [pids.build, pids.hog].sort(), 'exactly the build subtree');
  assert.deepEqual(willStop.pids, [pids.hog, pids.build], 'deepest first');
  const stopped = await inc.wait('stop1', 'subtree-stopped', 30_000);
  assert.ok(stopped.atMs >= willStop.atMs, 'told before it was done');
  assert.deepEqual([...stopped.terminated, ...stopped.killed].sort(), [pids.build, pids.hog].sort());
  assert.ok(!JSON.stringify(inc.incidents).includes('mcp-server-filesystem'), 'no command line in any incident');

  await waitFor(() => !alive(pids.hog) && !alive(pids.build), 10_000, { what: 'the build to be gone' });
  for (const who of ['agent', 'mcp', 'git']) assert.ok(alive(pids[who]), `${who} (${pids[who]}) still runs`);
  assert.equal(Number(readCgroupFile(cgroupOf('stop1'), 'memory.high')), 64 * MiB, 'the brake is restored after the stop');
  // sbctl watch is a process of its own: its line may come a moment after sbd's journal line.
  const streamed = () => watched.split('\n').slice(0, -1).map((l) => JSON.parse(l)).filter((i) => i.session === 'stop1').map((i) => i.type).filter((x) => x === 'will-stop' || x === 'subtree-stopped');
  await waitFor(() => streamed().length >= 2, 10_000, { what: 'sbctl watch to stream both incidents' });
  assert.deepEqual(streamed(), ['will-stop', 'subtree-stopped'], 'sbctl watch streamed them in order');
  // Issue 13: the agent reads what became of its build in its inbox (not only exit status 143).
  const r = sbctl('inbox', '--session', 'stop1', '--json');
  assert.equal(r.status, 0, r.stderr);
  const notices = r.stdout.trim().split('\n').map((l) => JSON.parse(l));
  const stoppedNotice = notices.find((n) => n.kind === 'stopped');
  assert.ok(stoppedNotice, `a 'stopped' notice in the inbox: ${r.stdout}`);
  assert.match(stoppedNotice.text, /^your command python3 \(.*\) was stopped at \d\d:\d\d because it stood still against the session's memory brake and there was no room to raise it: if you run it again, use less parallelism/);
  assert.ok(!r.stdout.includes('mcp-server-filesystem'), 'no command line in the inbox');
});
