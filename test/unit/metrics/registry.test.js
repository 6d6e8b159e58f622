// @ts-check
'use strict';
// sbd's registry (src/metrics/registry.ts): the names of the contract, the user label on every
// series, no timestamps, gauges computed from sbd's state at each read, and no timer of its own.
const test = require('node:test');
const assert = require('node:assert/strict');
const path = require('node:path');
const { spawnSync } = require('node:child_process');
const { SbdMetrics, metricNames, seriesNames } = require('../../../dist/metrics/registry.js');

const root = path.resolve(__dirname, '../../..');
const MiB = 2 ** 20;

/** The names the lead's alert rules and dashboard are written against (issue 14's brief). */
const CONTRACT = [
  'sessionbrake_build_info', 'sessionbrake_sessions', 'sessionbrake_feed_sessions', 'sessionbrake_stall_episodes_total',
  'sessionbrake_verdicts_total', 'sessionbrake_brake_raises_total', 'sessionbrake_brake_lowerings_total', 'sessionbrake_stops_total',
  'sessionbrake_leftovers_reaped_total', 'sessionbrake_freeze_incidents_total', 'sessionbrake_oom_kills_total',
  'sessionbrake_notify_command_failures_total', 'sessionbrake_onset_to_verdict_seconds', 'sessionbrake_standing_still_longest_seconds',
  'sessionbrake_grace_seconds', 'sessionbrake_monitors', 'sessionbrake_textfile_writes_total',
  'sessionbrake_process_cpu_seconds_total', 'sessionbrake_process_resident_memory_bytes', 'sessionbrake_process_open_fds',
  'sessionbrake_process_start_time_seconds', 'sessionbrake_process_max_fds',
];
const PER_SESSION = ['sessionbrake_session_memory_high_bytes', 'sessionbrake_session_memory_current_bytes', 'sessionbrake_session_standing_still_seconds'];

function metrics(view, perSession = false) {
  return new SbdMetrics({ user: 'alice', version: '9.9.9', graceS: 180, slices: ['sessions.slice'], perSession, view: () => view() });
}
const session = (name, state, extra = {}) => ({ name, slice: 'sessions.slice', state, feed: 'psi', standingStillS: undefined, memoryHighBytes: 64 * MiB, currentBytes: 10 * MiB, ...extra });
/** value of one series in an exposition, or undefined */
const valueOf = (text, series) => {
  const line = text.split('\n').find((l) => l.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
};

test('the metric names are the contract, the per-session ones only when asked for', () => {
  assert.deepEqual(metricNames(), [...CONTRACT].sort());
  assert.deepEqual(metricNames({ perSession: true }), [...CONTRACT, ...PER_SESSION].sort());
  const series = seriesNames();
  for (const s of ['sessionbrake_onset_to_verdict_seconds_bucket', 'sessionbrake_onset_to_verdict_seconds_sum', 'sessionbrake_onset_to_verdict_seconds_count', 'sessionbrake_stops_total']) assert.ok(series.includes(s), s);
});

test('every series carries the user label, and no sample line has a timestamp', async () => {
  const m = metrics(() => ({ sessions: [session('a', 'standing-still', { standingStillS: 3 })], monitors: ['running'] }), true);
  const text = await m.render();
  const samples = text.split('\n').filter((l) => l && !l.startsWith('#'));
  assert.ok(samples.length > 40, `${samples.length} samples`);
  for (const l of samples) {
    // name{labels} value: one space, no third field (a timestamp would be one)
    assert.match(l, /^[a-zA-Z_:][a-zA-Z0-9_:]*\{[^}]*\} [^ ]+$/, l);
    assert.match(l, /[{,]user="alice"[,}]/, l);
    assert.ok(!Number.isNaN(Number(l.slice(l.lastIndexOf(' ') + 1))), l);
  }
  assert.equal(valueOf(text, 'sessionbrake_build_info{version="9.9.9",user="alice"}'), 1);
  assert.equal(valueOf(text, 'sessionbrake_grace_seconds{user="alice"}'), 180);
});

test('gauges are computed from the state at each read: sessions by state and slice, feeds, longest standing-still, monitors', async () => {
  let sessions = [session('a', 'standing-still', { standingStillS: 42 }), session('b', 'ok', { feed: 'timer' }), session('c', 'hot', { slice: 'other.slice', standingStillS: undefined })];
  let monitors = ['running', 'running', 'stopped'];
  const m = metrics(() => ({ sessions, monitors }));
  let text = await m.render();
  assert.equal(valueOf(text, 'sessionbrake_sessions{state="standing-still",slice="sessions.slice",user="alice"}'), 1);
  assert.equal(valueOf(text, 'sessionbrake_sessions{state="ok",slice="sessions.slice",user="alice"}'), 1);
  assert.equal(valueOf(text, 'sessionbrake_sessions{state="hot",slice="other.slice",user="alice"}'), 1);
  assert.equal(valueOf(text, 'sessionbrake_sessions{state="stopping",slice="sessions.slice",user="alice"}'), 0, 'every state of a configured slice is there, zero or not');
  assert.equal(valueOf(text, 'sessionbrake_feed_sessions{mode="psi-trigger",user="alice"}'), 2);
  assert.equal(valueOf(text, 'sessionbrake_feed_sessions{mode="sampling",user="alice"}'), 1);
  assert.equal(valueOf(text, 'sessionbrake_standing_still_longest_seconds{user="alice"}'), 42);
  assert.equal(valueOf(text, 'sessionbrake_monitors{state="running",user="alice"}'), 2);
  assert.equal(valueOf(text, 'sessionbrake_monitors{state="stopped",user="alice"}'), 1);
  assert.equal(valueOf(text, 'sessionbrake_monitors{state="quarantined",user="alice"}'), 0);
  assert.ok(!text.includes('session="'), 'no session name as a label unless perSession');
  sessions = [];
  monitors = [];
  text = await m.render();
  assert.equal(valueOf(text, 'sessionbrake_sessions{state="standing-still",slice="sessions.slice",user="alice"}'), 0, 'gone at the next read');
  assert.equal(valueOf(text, 'sessionbrake_sessions{state="hot",slice="other.slice",user="alice"}'), undefined, 'an unconfigured slice without sessions is dropped');
  assert.equal(valueOf(text, 'sessionbrake_standing_still_longest_seconds{user="alice"}'), 0, '0 when none stands still');
});

test('per-session series when switched on, each session by its name', async () => {
  const m = metrics(() => ({ sessions: [session('a', 'standing-still', { standingStillS: 7.5, memoryHighBytes: 320 * MiB, currentBytes: 300 * MiB }), session('b', 'ok')], monitors: [] }), true);
  const text = await m.render();
  assert.equal(valueOf(text, 'sessionbrake_session_memory_high_bytes{session="a",user="alice"}'), 320 * MiB);
  assert.equal(valueOf(text, 'sessionbrake_session_memory_current_bytes{session="a",user="alice"}'), 300 * MiB);
  assert.equal(valueOf(text, 'sessionbrake_session_standing_still_seconds{session="a",user="alice"}'), 7.5);
  assert.equal(valueOf(text, 'sessionbrake_session_standing_still_seconds{session="b",user="alice"}'), 0);
});

test('counters: incidents, episodes, onset to verdict in the contract buckets, notify failures, textfile writes', async () => {
  const m = metrics(() => ({ sessions: [], monitors: [] }));
  const base = { unit: 'a.scope', session: 'a', atMs: 0, message: '', observeOnly: false };
  m.count({ ...base, type: 'brake-raised' });
  m.count({ ...base, type: 'subtree-stopped', slice: 'sessions.slice', critical: false });
  m.count({ ...base, type: 'standing-still' });
  m.episode('session');
  m.episode('machine');
  m.verdictAfterOnset(4.1);
  m.notifyFailed();
  m.textfileWritten();
  const text = await m.render();
  assert.equal(valueOf(text, 'sessionbrake_brake_raises_total{scope="session",user="alice"}'), 1);
  assert.equal(valueOf(text, 'sessionbrake_brake_raises_total{scope="slice",user="alice"}'), 0);
  assert.equal(valueOf(text, 'sessionbrake_stops_total{reason="slice-culprit",user="alice"}'), 1);
  assert.equal(valueOf(text, 'sessionbrake_stops_total{reason="own-brake",user="alice"}'), 0);
  assert.equal(valueOf(text, 'sessionbrake_verdicts_total{verdict="standing-still",user="alice"}'), 1);
  assert.equal(valueOf(text, 'sessionbrake_stall_episodes_total{scope="session",user="alice"}'), 1);
  assert.equal(valueOf(text, 'sessionbrake_stall_episodes_total{scope="machine",user="alice"}'), 1);
  assert.equal(valueOf(text, 'sessionbrake_stall_episodes_total{scope="slice",user="alice"}'), 0);
  const buckets = text.split('\n').filter((l) => l.startsWith('sessionbrake_onset_to_verdict_seconds_bucket')).map((l) => /le="([^"]+)"/.exec(l)?.[1]);
  assert.deepEqual(buckets, ['0.5', '1', '1.5', '2', '3', '5', '10', '30', '+Inf']);
  assert.equal(valueOf(text, 'sessionbrake_onset_to_verdict_seconds_bucket{le="3",user="alice"}'), 0);
  assert.equal(valueOf(text, 'sessionbrake_onset_to_verdict_seconds_bucket{le="5",user="alice"}'), 1);
  assert.equal(valueOf(text, 'sessionbrake_notify_command_failures_total{user="alice"}'), 1);
  assert.equal(valueOf(text, 'sessionbrake_textfile_writes_total{user="alice"}'), 1);
  assert.ok(valueOf(text, 'sessionbrake_process_resident_memory_bytes{user="alice"}') > 10 * MiB);
  assert.ok(valueOf(text, 'sessionbrake_process_open_fds{user="alice"}') >= 3);
  assert.ok(Math.abs(valueOf(text, 'sessionbrake_process_start_time_seconds{user="alice"}') - (Date.now() / 1000 - process.uptime())) < 2);
});

/** The main thread's context switches while a child idles 1 s after `setup` (its wakeups). */
function idleWakeups(setup) {
  const script = `
    const fs = require('node:fs');
    const cs = () => { const t = fs.readFileSync('/proc/thread-self/status', 'utf8'); return ['voluntary_ctxt_switches', 'nonvoluntary_ctxt_switches'].reduce((n, k) => n + Number(new RegExp('^' + k + ':\\\\s*(\\\\d+)', 'm').exec(t)[1]), 0); };
    (async () => { ${setup} })().then(() => setTimeout(() => {
      const before = cs();
      setTimeout(() => { process.stdout.write(String(cs() - before)); process.exit(0); }, 1000);
    }, 300));`;
  const r = spawnSync(process.execPath, ['-e', script], { cwd: root, encoding: 'utf8', timeout: 30_000 });
  assert.equal(r.status, 0, r.stderr);
  return Number(r.stdout);
}

test("sbd's metrics arm no timer: an idle second wakes the main thread a few times, where prom-client's default collectors (event-loop lag: a 10 ms timer) wake it ~100 times", () => {
  const ours = idleWakeups(`const { SbdMetrics } = require('./dist/metrics/registry.js'); const m = new SbdMetrics({ user: 'u', version: '0', graceS: 1, slices: [], perSession: true, view: () => ({ sessions: [], monitors: [] }) }); await m.render();`);
  const defaults = idleWakeups(`const pc = require('prom-client'); const r = new pc.Registry(); pc.collectDefaultMetrics({ register: r }); await r.metrics();`);
  assert.ok(defaults >= 50, `the measure sees a 10 ms timer (${defaults} wakeups)`);
  assert.ok(ours <= 10, `sbd's metrics idle: ${ours} wakeups in 1 s`);
});

test('metricNames() is what an exposition really carries: the TYPE lines of a rendered registry, per-session ones included', async () => {
  const m = metrics(() => ({ sessions: [session('a', 'ok')], monitors: [] }), true);
  const text = await m.render();
  const typed = [...text.matchAll(/^# TYPE (\S+) (\S+)$/gm)].map((x) => x[1]).sort();
  assert.deepEqual(typed, metricNames({ perSession: true }));
  const sampled = new Set(text.split('\n').filter((l) => l && !l.startsWith('#')).map((l) => l.split('{')[0]));
  assert.deepEqual([...sampled].sort(), seriesNames({ perSession: true }), 'and seriesNames() the names of its samples');
});
