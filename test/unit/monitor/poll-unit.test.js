// @ts-check
'use strict';
// Issue 13: a poll is a transient timer plus service of the session's slice; each job is a
// systemd property (monitor/poll-unit.ts): the timer's cadence and backoff, the tick's timeout,
// cleanup, output and brake.
const test = require('node:test');
const assert = require('node:assert/strict');
const { pollServiceProperties, pollTimerProperties, pollTimerName, pollServiceName, cadenceFor, TICK_ACCURACY_US } = require('../../../dist/monitor/poll-unit.js');
const { backoffS, MAX_BACKOFF_S } = require('../../../dist/monitor/backoff.js');
const { monitorIdOfUnit } = require('../../../dist/monitor/unit.js');

const ID = '0123abcd-0000-4000-8000-000000000001';
const input = {
  monitorId: ID, handle: '0123abcd', kind: 'poll', sessionId: 'fix-auth', slice: 'sessions.slice',
  programPath: '/usr/bin/curl', argv: ['curl', '-fsS', '-H', 'Authorization: Bearer s3cret', 'http://localhost:3000/health'],
  outputFile: '/run/user/1000/sessionbrake/monitors/x.log', memoryHighBytes: 2 ** 29, timeoutS: 2.5,
};
const asMap = (props) => new Map(props.map(([n, sig, v]) => [n, { sig, v }]));

test('the timer and its service are named after the monitor, and both names lead back to it', () => {
  assert.equal(pollTimerName(ID), `sb-monitor-${ID}.timer`);
  assert.equal(pollServiceName(ID), `sb-monitor-${ID}.service`);
  assert.equal(monitorIdOfUnit(pollTimerName(ID)), ID);
  assert.equal(monitorIdOfUnit(pollServiceName(ID)), ID);
  assert.equal(monitorIdOfUnit(`sb-monitor-${ID}.scope`), undefined);
  assert.equal(monitorIdOfUnit('sb-fix.scope'), undefined);
  assert.equal(monitorIdOfUnit(`x-sb-monitor-${ID}.service`), undefined);
});

test('the service is one tick of the session: its slice, marker, brake, whole-tree cleanup', () => {
  const p = asMap(pollServiceProperties(input));
  assert.deepEqual(p.get('Slice'), { sig: 's', v: 'sessions.slice' });
  assert.deepEqual(p.get('Environment')?.v, ['SESSIONBRAKE_SESSION=fix-auth', `SESSIONBRAKE_MONITOR=${ID}`]);
  assert.deepEqual(p.get('MemoryHigh'), { sig: 't', v: 2n ** 29n });
  assert.equal(p.get('KillMode')?.v, 'control-group');
  assert.equal(p.get('Type')?.v, 'exec', 'exec, not oneshot: RuntimeMaxSec has no effect on a oneshot');
  assert.deepEqual(p.get('ExecStart'), { sig: 'a(sasb)', v: [['/usr/bin/curl', input.argv, false]] });
  assert.doesNotMatch(String(p.get('Description')?.v), /s3cret|localhost/, 'no argument in the Description');
});

test('the per-tick timeout is systemd\'s RuntimeMaxUSec; output appended to the followed file; unloaded after its timer', () => {
  const p = asMap(pollServiceProperties(input));
  assert.deepEqual(p.get('RuntimeMaxUSec'), { sig: 't', v: 2_500_000n });
  assert.equal(p.get('TimeoutStopUSec')?.sig, 't');
  assert.equal(p.get('StandardOutputFileToAppend')?.v, input.outputFile);
  assert.equal(p.get('StandardErrorFileToAppend')?.v, input.outputFile);
  assert.equal(p.get('CollectMode')?.v, 'inactive-or-failed');
  assert.equal(p.has('Restart'), false, 'a failed tick is not restarted: the timer brings the next');
});

test('the interval: the first tick after firstS, each next one intervalS after the last one ended', () => {
  const p = asMap(pollTimerProperties(input, cadenceFor(30, 0, 0)));
  assert.deepEqual(p.get('TimersMonotonic'), { sig: 'a(st)', v: [['OnActiveSec', 0n], ['OnUnitInactiveSec', 30_000_000n]] });
  assert.deepEqual(p.get('AccuracyUSec'), { sig: 't', v: TICK_ACCURACY_US });
  assert.ok(TICK_ACCURACY_US <= 1_000_000n, 'systemd\'s default accuracy (1 min) would stretch a 5 s poll');
  assert.equal(p.has('RandomizedDelayUSec'), false);
  const again = asMap(pollTimerProperties(input, cadenceFor(30, 0, 30)));
  assert.deepEqual(again.get('TimersMonotonic')?.v, [['OnActiveSec', 30_000_000n], ['OnUnitInactiveSec', 30_000_000n]]);
});

test('the backoff: backoffS\'s range, its lowest draw as the wait and its jitter drawn by systemd (RandomizedDelayUSec)', () => {
  const c = cadenceFor(10, 2, 0);
  assert.equal(c.kind, 'backoff');
  assert.equal(c.afterS, backoffS(10, 2, 0));
  assert.ok(Math.abs(c.afterS + c.jitterS - backoffS(10, 2, 1)) < 1e-9);
  assert.ok(c.afterS > 10, 'longer than the interval');
  const p = asMap(pollTimerProperties(input, c));
  const wait = BigInt(Math.round(c.afterS * 1e6));
  assert.deepEqual(p.get('TimersMonotonic')?.v, [['OnActiveSec', wait], ['OnUnitInactiveSec', wait]], 'from now, and from each later failed tick\'s end while sbd is away');
  assert.deepEqual(p.get('RandomizedDelayUSec'), { sig: 't', v: BigInt(Math.round(c.jitterS * 1e6)) });
  assert.ok(cadenceFor(10, 3, 0).afterS > c.afterS, 'each failure waits longer');
  const capped = cadenceFor(600, 20, 0);
  assert.ok(capped.afterS + capped.jitterS <= MAX_BACKOFF_S * 1.2 + 1e-6, 'capped');
});
