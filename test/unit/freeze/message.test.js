// @ts-check
'use strict';
const test = require('node:test');
const assert = require('node:assert/strict');
const { freezeMessage, openPhrase, steps } = require('../../../dist/freeze/message.js');

const ctx = {
  session: 'web-fix',
  unit: 'web-fix.scope',
  agent: { pid: 4242, name: 'claude', cpuMs: 42 * 60_000 },
  hasHeartbeat: true,
  commands: ['make', 'npm'],
  mcpServers: 2,
  languageServers: 1,
  output: '/dev/pts/3',
};

test('pegged says who, how busy for how long, the heartbeat, CPU, what is open and what to do', () => {
  const m = freezeMessage(['pegged'], { share: 0.97, busyForMs: 330_000, beatAgeMs: 900_000 }, ctx);
  assert.equal(
    m,
    'session web-fix is pegged: its agent (claude, pid 4242) has spun at 97 % of a core for 5.5 min without writing its heartbeat (heartbeat last written 15 min ago); ' +
      'agent CPU 42.0 min in all; open: make, npm (2 MCP servers and 1 language server not counted). ' +
      'What to do: read its terminal /dev/pts/3; interrupt it (Esc or Ctrl-C in that terminal, or kill -INT 4242); ' +
      'stop the session only with a handoff (note what it was doing and what is open, then systemctl --user stop web-fix.scope).',
  );
});

test('missing and silent are told apart: alive but not renewing vs. claiming work with nothing open', () => {
  const facts = { share: 0, busyForMs: undefined, beatAgeMs: 200_000 };
  assert.match(freezeMessage(['missing'], facts, ctx), /^session web-fix is missing: its agent \(claude, pid 4242\) is alive but has not renewed its heartbeat for 3\.3 min; agent CPU 42\.0 min in all; open: make, npm/);
  const silent = freezeMessage(['silent'], { ...facts, beatAgeMs: 1_860_000 }, { ...ctx, commands: [] });
  assert.match(silent, /^session web-fix is silent: its agent \(claude, pid 4242\) claims to be working but has not written its heartbeat for 31 min; agent CPU 42\.0 min in all; nothing open \(2 MCP servers and 1 language server not counted\)\. What to do: /);
  assert.match(freezeMessage(['missing', 'pegged'], facts, ctx, true), /^session web-fix is still missing and pegged: /);
});

test('what is open: names, nothing, or unknown; servers counted apart', () => {
  assert.equal(openPhrase({ commands: [], mcpServers: 0, languageServers: 0 }), 'nothing open');
  assert.equal(openPhrase({ commands: ['make'], mcpServers: 1, languageServers: 0 }), 'open: make (1 MCP server not counted)');
  assert.equal(openPhrase({ commands: undefined, mcpServers: 0, languageServers: 2 }), 'open: unknown (2 language servers not counted)');
});

test('the steps: its terminal, its log, or whoever started it; interrupt; stop only with a handoff', () => {
  assert.equal(steps({ ...ctx, output: '/home/u/agent.log' })[0], 'read its log /home/u/agent.log');
  assert.equal(steps({ ...ctx, output: undefined })[0], 'read the terminal or log of whoever started the agent');
  assert.equal(steps({ ...ctx, agent: undefined })[1], 'interrupt it');
  assert.match(steps(ctx)[2], /^stop the session only with a handoff/);
});

test('a session without a heartbeat file, or whose file is gone, says so', () => {
  const f = { share: 0.9, busyForMs: 300_000, beatAgeMs: undefined };
  assert.match(freezeMessage(['pegged'], f, { ...ctx, hasHeartbeat: false }), /\(it has no heartbeat file\)/);
  assert.match(freezeMessage(['pegged'], f, ctx), /\(its heartbeat file is missing\)/);
});
