// @ts-check
'use strict';
// sbctl status for people: a slice sbd arbitrates shows its state, each member's figures (now,
// growth since the episode began, fair share) and the culprit with the rule and why.
const test = require('node:test');
const assert = require('node:assert/strict');
const { formatStatus, formatSlice } = require('../../../dist/cli/status-format.js');

const MiB = 2 ** 20;
const service = { running: true, pid: 42, version: '0.1.0', uptimeS: 75, feed: 'psi', observeOnly: false, slices: ['nbr.slice'] };
const slice = {
  slice: 'nbr.slice', state: 'standing-still', cause: 'slice-brake', currentBytes: 320 * MiB, highBytes: 320 * MiB, maxBytes: Infinity, memAvailableBytes: 1024 * MiB,
  members: [{ path: 'innocent.scope', currentBytes: 180 * MiB, growthBytes: 0, fairShareBytes: 160 * MiB }, { path: 'greedy.scope', currentBytes: 140 * MiB, growthBytes: 140 * MiB, fairShareBytes: 160 * MiB }],
  culprit: { path: 'greedy.scope', rule: 'grew-most', why: 'greedy.scope grew most since the episode began: +140 MiB' }, deadlineS: 8, lastAction: null,
};

test('a standing-still slice: state with cause and time left, every member, the culprit and why', () => {
  const lines = formatSlice(slice);
  assert.equal(lines[0], 'slice nbr.slice: standing-still (slice-brake; 8s left); memory 320.0M, brake 320.0M, ceiling infinity; machine: 1.00G available');
  assert.equal(lines[1], '  innocent.scope: 180.0M (fair share 160.0M)');
  assert.equal(lines[2], '  greedy.scope: 140.0M (fair share 160.0M, +140.0M since the episode began)');
  assert.equal(lines[3], '  culprit: greedy.scope (grew-most): greedy.scope grew most since the episode began: +140 MiB');
});

test('the slices come after the header, before the sessions; none without sbd', () => {
  const out = formatStatus({ service, sessions: [], slices: [slice] }).split('\n');
  assert.match(out[0], /^sbd: running/);
  assert.match(out[1], /^slice nbr\.slice: standing-still/);
  assert.equal(out[out.length - 1], 'no sessions');
  assert.doesNotMatch(formatStatus({ service: { ...service, running: false }, sessions: [] }), /slice nbr/);
});

const row = (name, feed) => ({
  name, unit: `${name}.scope`, state: 'ok', deadlineS: null, lastAction: null, feed, currentBytes: 40 * MiB, highBytes: 64 * MiB, maxBytes: Infinity,
  swapMaxBytes: 0, anonShare: 1, pressureFullAvg10: feed === 'psi' ? 0 : null, processes: 2, biggest: null, heartbeatAgeS: null,
});

test('a session sampled without PSI says so on its own line; its pressure shows as -', () => {
  const out = formatStatus({ service: { ...service, feed: 'mixed' }, sessions: [row('a', 'psi'), row('b', 'sampling (no PSI)')] });
  assert.match(out, /^b: feed: sampling \(no PSI\)$/m);
  assert.doesNotMatch(out, /^a: feed/m, 'nothing said of a session on PSI');
  const bLine = out.split('\n').find((l) => l.startsWith('b '));
  assert.equal(bLine?.split(/\s+/)[5], '-', 'PRESSURE column');
});

test('a slice without PSI says what wakes it instead', () => {
  const lines = formatSlice({ ...slice, feed: 'no PSI: woken by its brake counter and the machine watch, judged by the fallback measure' });
  assert.equal(lines[3], '  feed: no PSI: woken by its brake counter and the machine watch, judged by the fallback measure');
  assert.ok(!formatSlice({ ...slice, feed: 'psi' }).some((l) => l.includes('feed:')));
});

test('figures sbd answered from an older reading say how old they are; fresh ones, without sbd or from an older sbd, nothing', () => {
  const aged = (name, sampleAgeS) => ({ ...row(name, 'psi'), sampleAgeS });
  const out = formatStatus({ service, sessions: [aged('a', 0.4), aged('b', 12.4)] });
  assert.match(out.split('\n').at(-1) ?? '', /^memory, pressure and processes as read up to 12s ago \(sbd reads them again after each status\); states and deadlines are of now$/);
  for (const ages of [[0, 1.9], [null, null], [undefined]]) {
    assert.doesNotMatch(formatStatus({ service, sessions: ages.map((a, i) => aged(`s${i}`, a)) }), /as read up to/, String(ages));
  }
});

test('while sbd adopts the sessions it found (issue 15: after READY=1 with thousands), the header says how far', () => {
  const header = formatStatus({ service: { ...service, adopting: { adopted: 120, listed: 2000 } }, sessions: [] }).split('\n')[0];
  assert.match(header, /; adopting: 120 of 2000 units read, the sessions not yet read are not watched$/);
  assert.match(formatStatus({ service: { ...service, adopting: { adopted: 0, listed: null } }, sessions: [] }), /; adopting: listing the units, the sessions are not watched yet$/m);
  assert.doesNotMatch(formatStatus({ service, sessions: [] }), /adopting/, 'not once done');
});

test('the Adopting property: [read, listed] while adopting (-1 while listing), [] once done, absent from an older sbd', () => {
  const { adoptingToBus, adoptingFromBus, healthFromBus } = require('../../../dist/daemon/bus-types.js');
  assert.deepEqual(adoptingToBus({ adopted: 120, listed: 2000 }), [120, 2000]);
  assert.deepEqual(adoptingToBus({ adopted: 0, listed: null }), [0, -1]);
  assert.deepEqual(adoptingToBus(undefined), []);
  for (const a of [{ adopted: 120, listed: 2000 }, { adopted: 0, listed: null }, undefined]) assert.deepEqual(adoptingFromBus(adoptingToBus(a)), a);
  const props = { Version: '0.1.0', Pid: 42, UptimeUSec: 75_000_000n, Feed: 'psi', ObserveOnly: false, Slices: ['nbr.slice'] };
  assert.deepEqual(healthFromBus({ ...props, Adopting: [3, 9] }).adopting, { adopted: 3, listed: 9 }, 'sbctl status without GetStatus says adopting too');
  assert.equal('adopting' in healthFromBus(props), false, 'an sbd before issue 15');
  assert.equal('adopting' in healthFromBus({ ...props, Adopting: [] }), false);
});
