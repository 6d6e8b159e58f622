// @ts-check
'use strict';
// The stop path of the controller with real processes on the host (a fake cgroup directory
// lists them; the user manager is a fake that records the brakes set): the brake stays on
// during the TERM grace and is lifted only just before SIGKILL; the stop under way is
// persisted; a restarted sbd finishes it and puts the brake back; the brake's return is a
// lowering and starts the mute. The real thing: test/vm/guest/42-restart-midstop.
const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { spawn } = require('node:child_process');
const { BrakeController } = require('../../../dist/daemon/controller.js');
const { parseConfig } = require('../../../dist/config/load.js');
const { initialState } = require('../../../dist/stall/detector.js');
const { readProcess } = require('../../../dist/proc/table.js');
const { waitFor, reaped, sleep } = require('../../support/proc.js');
const { monotonicMs, bootId } = require('../../../dist/util/clock.js');

const MiB = 2 ** 20;
const GRACE_S = 1.5;
const LIFTED = 1024 * MiB - 128 * MiB; // MemoryMax 1G minus raise.maxMargin's default

/** A process that ignores SIGTERM (the disposition survives the exec), as a stuck build does. */
async function termIgnoring(t) {
  const child = spawn('sh', ['-c', "trap '' TERM; exec sleep 60"], { stdio: 'ignore' });
  t.after(() => child.kill('SIGKILL'));
  await waitFor('the build to exec', () => readProcess(child.pid)?.comm === 'sleep');
  return child;
}

function sleeper(t) {
  const child = spawn('sleep', ['60'], { stdio: 'ignore' });
  t.after(() => child.kill('SIGKILL'));
  return child;
}

const alive = (child) => child.exitCode === null && child.signalCode === null;

/** A controller over a fake cgroup holding `pids`; `saved` collects what it persists, `brakes` the brakes set (SETMEMORY answers). */
function setup(t, pids, agentPid, setMemory = async () => {}) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sb-stop-'));
  fs.writeFileSync(path.join(dir, 'cgroup.procs'), `${pids.join('\n')}\n`);
  const config = parseConfig({ stop: { termToKillS: GRACE_S } }, 'test');
  const told = [];
  const brakes = [];
  const saved = [];
  const manager = { setMemory: (unit, props) => { brakes.push({ atMs: monotonicMs(), unit, bytes: props.memoryHigh }); return setMemory(props); } };
  const controlGroup = fs.readFileSync('/proc/self/cgroup', 'utf8').split('\n').find((l) => l.startsWith('0::'))?.slice(3);
  const session = { unit: 'w.scope', id: 'w', invocationId: 'a'.repeat(32), slice: 'sessions.slice', controlGroup, cgroupDir: dir, memoryHigh: 64 * MiB, memoryMax: 1024 * MiB, memorySwapMax: 0, agentPid, agentFromRecord: true };
  const make = () => new BrakeController({
    config,
    manager: /** @type {any} */ (manager),
    incidents: /** @type {any} */ ({ tell: (i) => told.push({ ...i, monoMs: monotonicMs() }) }),
    sessions: () => [/** @type {any} */ (session)],
    save: (unit, s) => saved.push({ atMs: monotonicMs(), unit, s: s && JSON.parse(JSON.stringify(s)) }),
    log: () => {},
  });
  const feed = { state: initialState(), lastVerdict: undefined, setState(s) { this.state = s; } };
  t.after(() => fs.rmSync(dir, { recursive: true, force: true }));
  return { c: make(), make, told, brakes, saved, session, feed, config, of: (type) => told.find((i) => i.type === type) };
}

test('stop: the brake stays on during the TERM grace and is lifted only just before SIGKILL, then put back', async (t) => {
  const agent = sleeper(t);
  const build = await termIgnoring(t);
  const s = setup(t, [agent.pid, build.pid], agent.pid);
  await s.c.stopBiggest(/** @type {any} */ (s.session), /** @type {any} */ (s.feed), {});
  const willStop = s.of('will-stop');
  assert.deepEqual(willStop?.pids, [build.pid]);
  assert.deepEqual(await reaped(build), [null, 'SIGKILL']);
  assert.ok(alive(agent), 'the agent lives on');
  assert.equal(s.brakes.length, 2, JSON.stringify(s.brakes));
  const [lift, back] = s.brakes;
  assert.equal(lift.bytes, LIFTED);
  const liftedAfterS = (lift.atMs - willStop.monoMs) / 1000;
  assert.ok(liftedAfterS >= GRACE_S - 0.1, `the brake was lifted ${liftedAfterS} s after SIGTERM: the grace is ${GRACE_S} s, under the brake`);
  assert.equal(back.bytes, 64 * MiB, 'the brake is back after the stop');
  assert.equal(s.of('subtree-stopped')?.killed?.[0], build.pid);
});

test('stop: a command that ends on SIGTERM is stopped without the brake ever moving', async (t) => {
  const agent = sleeper(t);
  const build = sleeper(t);
  const s = setup(t, [agent.pid, build.pid], agent.pid);
  await s.c.stopBiggest(/** @type {any} */ (s.session), /** @type {any} */ (s.feed), {});
  assert.deepEqual(await reaped(build), [null, 'SIGTERM']);
  assert.deepEqual(s.brakes, [], 'nothing to kill, nothing to lift');
  assert.equal(s.feed.state.mutedUntilMs, 0, 'no lowering, no mute');
});

test('stop: the stop under way is persisted (what was signalled by identity, when SIGKILL is due, the brake to put back) and forgotten once done', async (t) => {
  const agent = sleeper(t);
  const build = await termIgnoring(t);
  const s = setup(t, [agent.pid, build.pid], agent.pid);
  const me = readProcess(build.pid);
  await s.c.stopBiggest(/** @type {any} */ (s.session), /** @type {any} */ (s.feed), {});
  const willStop = s.of('will-stop');
  const during = s.saved.filter((x) => x.s?.stop).at(-1);
  assert.ok(during, `a stop record was saved: ${JSON.stringify(s.saved)}`);
  assert.ok(during.atMs <= willStop.monoMs, 'saved before the signal went out');
  const stop = during.s.stop;
  assert.deepEqual(stop.processes, [{ pid: build.pid, startTicks: me?.startTicks, uid: process.getuid?.() }]);
  assert.equal(stop.brakeBytes, 64 * MiB);
  assert.ok(Math.abs(stop.killDueAtMs - (willStop.monoMs + GRACE_S * 1000)) < 200, `SIGKILL due ${stop.killDueAtMs - willStop.monoMs} ms after SIGTERM, the grace is ${GRACE_S * 1000} ms`);
  assert.equal(s.saved.at(-1)?.s?.stop, undefined, 'forgotten once the stop is over');
});

test('stop: putting the brake back after the kill is a lowering and starts the mute', async (t) => {
  const agent = sleeper(t);
  const build = await termIgnoring(t);
  const s = setup(t, [agent.pid, build.pid], agent.pid);
  s.feed.state = { ...s.feed.state, hotWindows: 2, deadline: { startedAtMs: 0, endsAtMs: 1, currentAtStart: 64 * MiB } };
  await s.c.stopBiggest(/** @type {any} */ (s.session), /** @type {any} */ (s.feed), {});
  const back = s.brakes.at(-1);
  assert.equal(back?.bytes, 64 * MiB);
  const muted = s.feed.state.mutedUntilMs - back.atMs;
  assert.ok(Math.abs(muted - s.config.detector.muteAfterLowerS * 1000) < 1000, `muted for ${muted} ms after the brake came back`);
  assert.equal(s.feed.state.deadline, undefined);
  assert.equal(s.feed.state.hotWindows, 0);
});

test('restart mid-stop: the next sbd SIGKILLs what is left at the due time (identity checked), puts the brake back and tells', async (t) => {
  const agent = sleeper(t);
  const build = await termIgnoring(t);
  const stranger = sleeper(t); // holds a pid that was signalled before, but started at another time
  const s = setup(t, [agent.pid, build.pid, stranger.pid], agent.pid);
  const dueAt = monotonicMs() + 1500;
  const saved = {
    bootId: bootId(),
    invocationId: s.session.invocationId,
    stop: {
      name: 'sleep',
      processes: [build, stranger].map((c) => ({ pid: c.pid, startTicks: (readProcess(c.pid)?.startTicks ?? 0) + (c === stranger ? 1 : 0), uid: process.getuid?.() })),
      killDueAtMs: dueAt,
      brakeBytes: 64 * MiB,
    },
  };
  const c = s.make(); // the restarted sbd
  c.restore(/** @type {any} */ (s.session), /** @type {any} */ (s.feed), /** @type {any} */ (saved));
  assert.equal(c.stopping(s.session.unit), true, 'the stop is under way again (status says stopping)');
  await sleep(dueAt - monotonicMs() - 300);
  assert.ok(alive(build), 'not killed before it is due');
  assert.deepEqual(s.brakes, [], 'nor the brake lifted');
  const [, signal] = await reaped(build);
  const lateMs = monotonicMs() - dueAt;
  assert.equal(signal, 'SIGKILL');
  assert.ok(lateMs > -100 && lateMs < 1000, `killed ${lateMs} ms after the due time`);
  await waitFor('the finished stop to be told', () => s.of('stop-finished'), 8000);
  assert.ok(alive(stranger), 'a process with another start time is not the one signalled: spared');
  assert.ok(alive(agent));
  assert.deepEqual(s.brakes.map((b) => b.bytes), [LIFTED, 64 * MiB], 'lifted just before SIGKILL, then put back');
  const told = s.of('stop-finished');
  assert.deepEqual(told?.killed, [build.pid]);
  assert.deepEqual(told?.skipped, [stranger.pid]);
  assert.match(told?.message ?? '', /restart/);
  assert.equal(c.stopping(s.session.unit), false);
  assert.ok(s.feed.state.mutedUntilMs > monotonicMs(), 'the brake came back down: muted');
  assert.equal(s.saved.at(-1)?.s?.stop, undefined, 'the record is gone once finished');
});

test('restart mid-stop: a brake left lifted by the sbd that died is put back even when nothing is left to kill', async (t) => {
  const s = setup(t, [], undefined);
  s.session.memoryHigh = LIFTED; // as systemd reports it: the old sbd lifted it just before it died
  const saved = { bootId: bootId(), invocationId: s.session.invocationId, stop: { name: 'cc1plus', processes: [{ pid: 2 ** 22 + 1, startTicks: 1, uid: process.getuid?.() }], killDueAtMs: monotonicMs() - 1000, brakeBytes: 64 * MiB } };
  s.make().restore(/** @type {any} */ (s.session), /** @type {any} */ (s.feed), /** @type {any} */ (saved));
  await waitFor('the finished stop to be told', () => s.of('stop-finished'), 8000);
  assert.deepEqual(s.brakes.map((b) => b.bytes), [64 * MiB]);
  assert.equal(s.session.memoryHigh, 64 * MiB);
  assert.ok(s.feed.state.mutedUntilMs > monotonicMs(), 'a lowering: muted');
});

test('restart: a stop record of another session behind the same name is dropped, nothing signalled', async (t) => {
  const agent = sleeper(t);
  const build = await termIgnoring(t);
  const s = setup(t, [agent.pid, build.pid], agent.pid);
  const saved = { bootId: bootId(), invocationId: 'b'.repeat(32), stop: { name: 'sleep', processes: [{ pid: build.pid, startTicks: readProcess(build.pid)?.startTicks, uid: process.getuid?.() }], killDueAtMs: monotonicMs(), brakeBytes: 64 * MiB } };
  const c = s.make();
  c.restore(/** @type {any} */ (s.session), /** @type {any} */ (s.feed), /** @type {any} */ (saved));
  await sleep(500);
  assert.ok(alive(build));
  assert.equal(c.stopping(s.session.unit), false);
  assert.deepEqual(s.brakes, []);
});

test('restart: a stop record saved under another boot is not finished: its due time is another boot\'s clock', async (t) => {
  const agent = sleeper(t);
  const build = await termIgnoring(t);
  const s = setup(t, [agent.pid, build.pid], agent.pid);
  const saved = { bootId: 'another-boot', invocationId: s.session.invocationId, stop: { name: 'sleep', processes: [{ pid: build.pid, startTicks: readProcess(build.pid)?.startTicks, uid: process.getuid?.() }], killDueAtMs: 0, brakeBytes: 64 * MiB } };
  const c = s.make();
  c.restore(/** @type {any} */ (s.session), /** @type {any} */ (s.feed), /** @type {any} */ (saved));
  await sleep(500);
  assert.ok(alive(build), 'nothing signalled');
  assert.equal(c.stopping(s.session.unit), false);
});

test('stop: SIGKILL does not wait on a stuck lift of the brake longer than LIFT_WAIT_MS', async (t) => {
  const { LIFT_WAIT_MS } = require('../../../dist/actions/stop-subtree.js');
  const agent = sleeper(t);
  const build = await termIgnoring(t);
  const s = setup(t, [agent.pid, build.pid], agent.pid, (props) => (props.memoryHigh === LIFTED ? new Promise(() => {}) : Promise.resolve()));
  const started = monotonicMs();
  const stopping = s.c.stopBiggest(/** @type {any} */ (s.session), /** @type {any} */ (s.feed), {});
  assert.deepEqual(await reaped(build), [null, 'SIGKILL']);
  const tookMs = monotonicMs() - started;
  assert.ok(tookMs < GRACE_S * 1000 + LIFT_WAIT_MS + 1000, `killed ${tookMs} ms after SIGTERM`);
  await stopping;
});

test('near MemoryMax: the verdict stops the biggest command at once, and the will-stop says how near the wall was', async (t) => {
  const agent = sleeper(t);
  const build = sleeper(t);
  const s = setup(t, [agent.pid, build.pid], agent.pid);
  const sample = { atMs: monotonicMs(), currentBytes: 980 * MiB, highBytes: 896 * MiB, maxBytes: 1024 * MiB };
  const v = { event: 'near-memory-max', state: 'standing-still', window: { evidence: ['own-high-moved'], share: 0.6, anonShare: 1 }, hotWindows: 2, deadlineRemainingMs: 170_000, explain: 'near-memory-max' };
  s.c.onVerdict(/** @type {any} */ (s.session), /** @type {any} */ (s.feed), /** @type {any} */ (v), /** @type {any} */ (sample));
  await waitFor('the stop to be told', () => s.of('subtree-stopped'));
  const willStop = s.of('will-stop');
  assert.deepEqual(willStop?.pids, [build.pid]);
  assert.match(willStop.message, /\(44.0M left below its MemoryMax 1.00G, 84.0M over its brake: the grace is cut short/);
  assert.deepEqual(willStop.nearMemoryMax, { currentBytes: 980 * MiB, highBytes: 896 * MiB, maxBytes: 1024 * MiB, leftBytes: 44 * MiB });
  assert.deepEqual(await reaped(build), [null, 'SIGTERM']);
  assert.ok(alive(agent), 'the agent lives on');
});
