// @ts-check
'use strict';
// Issue 13: an ssh monitor's argv (never a command string built by sbd) and the words a remote
// shell would read differently, refused before anything runs.
const test = require('node:test');
const assert = require('node:assert/strict');
const { sshProbeArgv } = require('../../../dist/monitor/ssh-command.js');
const { judgeRemoteProbe } = require('../../../dist/monitor/safety.js');

test('ssh\'s options, the host, --, then each remote word as its own argument', () => {
  assert.deepEqual(sshProbeArgv('ann@gpu1', 10, ['tail', '-n', '5', '/data/run7/train.log']),
    ['ssh', '-o', 'BatchMode=yes', '-o', 'ConnectTimeout=5', 'ann@gpu1', '--', 'tail', '-n', '5', '/data/run7/train.log']);
});

test('connecting may take half of the tick\'s timeout, at least 1 s', () => {
  assert.ok(sshProbeArgv('h', 30, ['uptime']).includes('ConnectTimeout=15'));
  assert.ok(sshProbeArgv('h', 1, ['uptime']).includes('ConnectTimeout=1'));
  assert.ok(sshProbeArgv('h', 2.9, ['uptime']).includes('ConnectTimeout=1'));
});

test('remote words: plain ones pass; what a remote shell would read is refused with the word named', () => {
  assert.deepEqual(judgeRemoteProbe(['nvidia-smi', '--query-gpu=utilization.gpu', '--format=csv,noheader']), { ok: true });
  assert.deepEqual(judgeRemoteProbe(['stat', '-c', '%s', '/data/ckpt/last.pt']), { ok: true });
  for (const word of ['a b', '$HOME/x', 'x;reboot', "it's", '*.log', '~/log', 'a`b`', 'x|y', '"q"', 'a\nb', 'x\\y']) {
    const v = judgeRemoteProbe(['cat', word]);
    assert.equal(v.ok, false, `refused: ${JSON.stringify(word)}`);
    assert.match(v.ok ? '' : v.reason, /^word 2 .* the remote shell would read/);
  }
});

test('remote words are judged by judgeProbe\'s rules first: work and shells are quarantined as for a poll', () => {
  const work = judgeRemoteProbe(['npm', 'install']);
  assert.equal(work.ok, false);
  assert.match(work.ok ? '' : work.reason, /"npm install" is work/);
  assert.equal(judgeRemoteProbe(['bash', '-c', 'uptime']).ok, false);
});
