// @ts-check
'use strict';
// Issue 13: a poll with workload verbs, redirection or backgrounding is quarantined with the reason.
const test = require('node:test');
const assert = require('node:assert/strict');
const { judgeProbe } = require('../../../dist/monitor/safety.js');

test('read-only looks are fine', () => {
  for (const argv of [['curl', '-fsS', 'http://localhost:3000/health'], ['git', 'status', '--short'], ['gh', 'run', 'view', '123', '--json', 'status'], ['/usr/bin/tail', '-n', '20', '/tmp/x.log'], ['kubectl', 'get', 'pods'], ['ls', '-l', '/tmp']]) {
    assert.deepEqual(judgeProbe(argv), { ok: true }, argv.join(' '));
  }
});

test('workload verbs are quarantined, naming them', () => {
  const cases = [[['npm', 'install'], /"npm install" is work/], [['npm', 'run', 'build'], /"npm build" is work/], [['cargo', 'test', '--release'], /"cargo test" is work/], [['python3', '-u', 'train'], /"python3 train" is work/], [['make', '-j8'], /"make" does work/], [['pytest', '-x'], /"pytest" does work/]];
  for (const [argv, why] of cases) {
    const v = judgeProbe(argv);
    assert.equal(v.ok, false, argv.join(' '));
    assert.match(v.ok ? '' : v.reason, why);
  }
});

test('redirection, backgrounding, pipes and lists are quarantined', () => {
  for (const tok of ['>', '>>', '2>', '&', '&&', '|', '||', ';', '$(id)', '`id`', 'out.txt;', 'x&']) {
    const v = judgeProbe(['cat', '/tmp/a', tok]);
    assert.equal(v.ok, false, tok);
    assert.match(v.ok ? '' : v.reason, /shell syntax/);
  }
});

test('a shell or a command runner as the program is quarantined', () => {
  for (const argv of [['sh', '-c', 'curl x'], ['/bin/bash', '-lc', 'ls'], ['env', 'FOO=1', 'make'], ['nohup', 'sleep', '9']]) {
    const v = judgeProbe(argv);
    assert.equal(v.ok, false, argv.join(' '));
    assert.match(v.ok ? '' : v.reason, /runs other commands/);
  }
});
