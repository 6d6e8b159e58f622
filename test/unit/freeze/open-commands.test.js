// @ts-check
'use strict';
const test = require('node:test');
const assert = require('node:assert/strict');
const { openCommands, isLanguageServer } = require('../../../dist/freeze/open-commands.js');

const p = (pid, ppid, comm, argv = [comm]) => ({ pid, ppid, comm, rssBytes: 0, argv });

// An agent (claude, pid 100) with an MCP server, a language server, a build and a test run.
const session = [
  p(100, 1, 'claude', ['claude', '--mcp-config', '/home/u/mcp.json']),
  p(300, 100, 'node', ['node', '/opt/mcp/server.js', '--stdio']), p(301, 300, 'rg'),
  p(310, 100, 'node', ['node', '/usr/lib/node_modules/typescript-language-server/lib/cli.mjs', '--stdio']),
  p(311, 310, 'node', ['node', '/usr/lib/node_modules/typescript/lib/tsserver.js']),
  p(200, 100, 'make', ['make', '-j4']), p(201, 200, 'cc1plus'),
  p(500, 100, 'npm', ['npm', 'test']), p(501, 500, 'node', ['node', 'jest', '--token=SECRET']),
];

test('what the agent waits on is open; its MCP and language servers are not', () => {
  const v = openCommands(session, 100);
  assert.deepEqual(v.commands.map((c) => c.pid), [200, 500]);
  assert.equal(v.mcpServers, 1);
  assert.equal(v.languageServers, 1);
});

test('an agent with only servers has nothing open (silent is reachable)', () => {
  const servers = session.filter((x) => x.pid < 200 || (x.pid >= 300 && x.pid < 400));
  assert.deepEqual(openCommands(servers, 100), { commands: [], mcpServers: 1, languageServers: 1 });
});

test('a wrapper of servers only is a server; a wrapper of anything else is a command', () => {
  const procs = [
    p(100, 1, 'claude'),
    p(200, 100, 'sh', ['sh', '-c', 'exec gopls']), p(201, 200, 'gopls'),
    p(300, 100, 'npm', ['npm', 'exec', 'x']), p(301, 300, 'node', ['node', 'server.js', 'mcp']),
    p(400, 100, 'sh', ['sh', '-c', 'make all']), p(401, 400, 'make'),
  ];
  assert.deepEqual(openCommands(procs, 100), { commands: [procs[5]], mcpServers: 1, languageServers: 1 });
});

test('processes outside the agent\'s tree are not waited on; an unknown or childless agent has nothing open', () => {
  const procs = [p(100, 1, 'claude'), p(200, 1, 'vite'), p(201, 200, 'esbuild')];
  assert.deepEqual(openCommands(procs, 100).commands, []);
  assert.deepEqual(openCommands(procs, 999).commands, []);
  assert.deepEqual(openCommands([p(7, 7, 'init')], 7).commands, [], 'a process that is its own parent is not its own child');
});

test('a command named like the agent is still a command (a node agent running a node build)', () => {
  const procs = [p(100, 1, 'node', ['node', 'agent.js']), p(200, 100, 'node', ['node', 'webpack'])];
  assert.deepEqual(openCommands(procs, 100).commands.map((c) => c.pid), [200]);
});

test('isLanguageServer: program names, not options or arbitrary words', () => {
  const yes = ['gopls', 'clangd', 'rust-analyzer', 'pylsp', 'jdtls', 'lua-language-server', 'bash-language-server', 'pyright-langserver', 'vscode-json-languageserver', 'sourcekit-lsp', 'haskell-language-server-wrapper'];
  for (const name of yes) assert.ok(isLanguageServer(p(1, 0, name)), name);
  assert.ok(isLanguageServer(p(1, 0, 'node', ['node', '/x/node_modules/pyright/langserver.index.js', '--stdio'])), "pyright's server script");
  assert.ok(!isLanguageServer(p(1, 0, 'node', ['node', '/home/u/my-language-server/node_modules/.bin/jest'])), 'a directory name is not the program');
  assert.ok(isLanguageServer(p(1, 0, 'node', ['node', '/x/bin/typescript-language-server', '--stdio'])));
  assert.ok(isLanguageServer(p(1, 0, 'node', ['node', '/x/typescript/lib/tsserver.js'])));
  assert.ok(isLanguageServer(p(1, 0, 'sh', ['sh', '-c', 'exec /usr/bin/gopls serve'])));
  const no = [['make', '-j4'], ['cargo', 'build', '--features=lsp'], ['npm', 'test'], ['python3', 'build.py'], ['node', 'jest'], ['git', 'fetch'], ['lsp']];
  for (const argv of no) assert.ok(!isLanguageServer(p(1, 0, argv[0], argv)), argv.join(' '));
});
