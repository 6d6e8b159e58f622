// @ts-check
'use strict';
// Issue 13: a spawn is a transient service of the session's slice, each job done by a systemd property.
const test = require('node:test');
const assert = require('node:assert/strict');
const { spawnUnitProperties, spawnUnitName, CRASH_LOOP_BURST } = require('../../../dist/monitor/unit.js');

const input = {
  monitorId: '0123abcd-0000-4000-8000-000000000001', handle: '0123abcd', sessionId: 'fix-auth', slice: 'sessions.slice',
  argv: ['npm', 'run', 'dev', '--', '--token=s3cret'], programPath: '/usr/bin/npm', cwd: '/home/ann/src/app',
  outputFile: '/run/user/1000/sessionbrake/monitors/0123abcd.log', memoryHighBytes: 2 ** 30, runtimeMaxS: 3600.2,
};
const props = new Map(spawnUnitProperties(input).map(([n, sig, v]) => [n, { sig, v }]));

test('the unit belongs to the session: its slice and its marker', () => {
  assert.equal(spawnUnitName(input.monitorId), 'sb-monitor-0123abcd-0000-4000-8000-000000000001.service');
  assert.deepEqual(props.get('Slice'), { sig: 's', v: 'sessions.slice' });
  assert.deepEqual(props.get('Environment')?.v, ['SESSIONBRAKE_SESSION=fix-auth', 'SESSIONBRAKE_MONITOR=0123abcd-0000-4000-8000-000000000001']);
});

test('the argv goes to ExecStart as an argv; no argument shows in the Description', () => {
  assert.deepEqual(props.get('ExecStart'), { sig: 'a(sasb)', v: [['/usr/bin/npm', ['npm', 'run', 'dev', '--', '--token=s3cret'], false]] });
  assert.doesNotMatch(String(props.get('Description')?.v), /s3cret|run dev/);
});

test('cleanup, expiry, the crash-loop fuse, output and a brake of its own', () => {
  assert.equal(props.get('KillMode')?.v, 'control-group');
  assert.deepEqual(props.get('RuntimeMaxUSec'), { sig: 't', v: 3_601_000_000n });
  assert.equal(props.get('Restart')?.v, 'on-failure');
  assert.deepEqual(props.get('StartLimitBurst'), { sig: 'u', v: CRASH_LOOP_BURST });
  assert.equal(props.get('StandardOutputFileToAppend')?.v, input.outputFile);
  assert.equal(props.get('StandardErrorFileToAppend')?.v, input.outputFile);
  assert.deepEqual(props.get('MemoryHigh'), { sig: 't', v: 2n ** 30n });
  assert.equal(props.get('Type')?.v, 'exec');
  assert.equal(props.get('WorkingDirectory')?.v, '/home/ann/src/app');
});

test('no expiry, no RuntimeMaxUSec', () => {
  assert.equal(spawnUnitProperties({ ...input, runtimeMaxS: undefined }).some(([n]) => n === 'RuntimeMaxUSec'), false);
});

test('a SIGTERM ends it for good: RuntimeMaxSec\'s stop is not taken for a crash that Restart=on-failure replays', () => {
  assert.deepEqual(props.get('RestartPreventExitStatus'), { sig: '(aiai)', v: [[], [15]] });
});
