// @ts-check
'use strict';
const test = require('node:test');
const assert = require('node:assert/strict');
const { freezeStep, initialFreeze, heartbeatAge, processViewNeeded, savedFreezeOf, restoredFreeze } = require('../../../dist/freeze/policy.js');
const { parseConfig } = require('../../../dist/config/load.js');

const cfg = parseConfig({}, 'defaults').freeze; // checks every 60 s; pegged 0.75 for 300 s; missing 180 s; silent 1800 s
const PEGGED_MS = cfg.peggedForS * 1000;

/**
 * Observations one check (60 s) apart. `cpu`: the agent's own share of a core in the interval
 * (null: the agent is gone); `beat`: when the heartbeat was last written (ms on the same clock,
 * the wall clock agreeing); `wallStepMs`: how far the wall clock is off from here on.
 */
function run(steps, start = initialFreeze()) {
  let s = start;
  let cpuMs = 0;
  const told = [];
  steps.forEach((st, i) => {
    const atMs = i * 60_000;
    cpuMs += (st.cpu ?? 0) * 60_000;
    const wall = atMs + (st.wallStepMs ?? 0);
    const heartbeat = st.beat === undefined ? undefined : { mtimeMs: st.beat, ageMs: wall - st.beat };
    const o = { atMs, agentCpuMs: st.cpu === null ? undefined : cpuMs, heartbeat, claimsWorking: st.working ?? false, commandsOpen: st.commands ?? 1 };
    const [next, t] = freezeStep(s, o, cfg);
    s = next;
    told.push(t);
  });
  return { state: s, told };
}
const kinds = (told) => told.map((t) => t.map((x) => (x.kind === 'signal' ? x.signal : x.kind)).join(','));

test('pegged: the agent itself busy five minutes in a row without a heartbeat, told once, then recovered', () => {
  const steps = [{ cpu: 0 }, ...Array(6).fill({ cpu: 0.9 }), { cpu: 0.1 }];
  assert.deepEqual(kinds(run(steps).told), ['', '', '', '', '', 'pegged', '', 'recovered']);
});

test('pegged: one calm minute starts the count over; a heartbeat during the busy spell means no freeze', () => {
  const calm = run([{ cpu: 0 }, { cpu: 0.9 }, { cpu: 0.9 }, { cpu: 0.9 }, { cpu: 0.5 }, { cpu: 0.9 }, { cpu: 0.9 }, { cpu: 0.9 }]);
  assert.ok(calm.told.every((t) => t.length === 0));
  const beating = run(Array.from({ length: 8 }, (_, i) => ({ cpu: 0.9, beat: i * 60_000 })));
  assert.ok(beating.told.every((t) => t.length === 0), 'busy, but it says it is working');
});

test('pegged: an agent that exits ends the busy spell; its facts carry the share, the spell and the heartbeat age', () => {
  const gone = run([{ cpu: 0 }, { cpu: 0.9 }, { cpu: 0.9 }, { cpu: 0.9 }, { cpu: null }, { cpu: 0.9 }, { cpu: 0.9 }, { cpu: 0.9 }]);
  assert.ok(gone.told.every((t) => t.length === 0));
  const { told } = run([{ cpu: 0, beat: 0 }, ...Array(5).fill({ cpu: 1, beat: 0 })]);
  const signal = told.flat().find((x) => x.kind === 'signal' && x.signal === 'pegged');
  assert.deepEqual(signal?.facts, { share: 1, busyForMs: 300_000, beatAgeMs: 300_000 });
});

test('pegged: a check between two (a heartbeat event) is no calm interval: short intervals add up', () => {
  // Busy every minute, and a check 50 ms after each: measured alone, 50 ms of 10 ms ticks reads 0 %.
  let s = initialFreeze();
  const told = [];
  for (let i = 0; i <= 6; i++) {
    for (const atMs of [i * 60_000, i * 60_000 + 50]) {
      const [next, t] = freezeStep(s, { atMs, agentCpuMs: i * 60_000, heartbeat: undefined, claimsWorking: false, commandsOpen: 1 }, cfg);
      s = next;
      told.push(...t);
    }
  }
  assert.deepEqual(told.map((x) => x.kind === 'signal' && x.signal), ['pegged']);
});

test('missing: alive without a heartbeat for 3 minutes; recovered when it beats again; a dead agent is not missing', () => {
  assert.deepEqual(kinds(run([{ beat: 0 }, { beat: 0 }, { beat: 0 }, { beat: 0 }, { beat: 200_000 }]).told), ['', '', '', 'missing', 'recovered']);
  const dead = run([{ beat: 0, cpu: null }, { beat: 0, cpu: null }, { beat: 0, cpu: null }, { beat: 0, cpu: null }]);
  assert.ok(dead.told.every((t) => t.length === 0));
});

test('silent: claims to work, no heartbeat for 30 minutes, nothing open: it takes the place of missing', () => {
  const { told, state } = run(Array.from({ length: 32 }, () => ({ beat: 0, working: true, commands: 0 })));
  const signals = told.flat().filter((x) => x.kind === 'signal');
  assert.deepEqual(signals.map((x) => [x.signal, x.open]), [['missing', ['missing']], ['silent', ['silent']]], 'missing first (3 min), then silent instead (30 min)');
  assert.deepEqual(state.open, ['silent']);
  assert.ok(!told.flat().some((x) => x.kind === 'recovered'), 'going from missing to silent is no recovery');
  const busy = run(Array.from({ length: 32 }, () => ({ beat: 0, working: true, commands: 2 })));
  assert.deepEqual(busy.state.open, ['missing'], 'a command is open: missing, not silent');
  const idle = run(Array.from({ length: 32 }, () => ({ beat: 0, working: false, commands: 0 })));
  assert.deepEqual(idle.state.open, ['missing'], 'not claiming work: missing, not silent');
});

test('an open incident is reminded about after an hour, not before', () => {
  const { told } = run(Array.from({ length: 70 }, () => ({ beat: 0 })));
  const at = told.map((t, i) => (t.length ? `${i}:${t.map((x) => x.kind).join(',')}` : '')).filter(Boolean);
  assert.deepEqual(at, ['3:signal', '63:reminder']);
});

test('a step of the wall clock neither ages the heartbeat nor renews it', () => {
  // written at 0, renewed at 60 s; the wall clock jumps 15 minutes forward at the third check
  const forward = run([{ beat: 0 }, { beat: 60_000 }, { beat: 60_000, wallStepMs: 900_000 }, { beat: 60_000, wallStepMs: 900_000 }]);
  assert.deepEqual(forward.state.open, [], 'not missing: it was written 2 min ago, not 17');
  assert.equal(forward.state.beatAgeMs, 120_000);
  // and 15 minutes back: the age goes on growing, missing comes on time
  const back = run(Array.from({ length: 5 }, (_, i) => ({ beat: 0, wallStepMs: i >= 1 ? -900_000 : 0 })));
  assert.deepEqual(kinds(back.told), ['', '', '', 'missing', '']);
  // a write after the step is still a write
  const written = run([{ beat: 0 }, { beat: 0 }, { beat: 0 }, { beat: 0 }, { beat: 500_000, wallStepMs: -900_000 }]);
  assert.deepEqual(kinds(written.told), ['', '', '', 'missing', 'recovered']);
});

test('heartbeatAge: the wall clock at first sight; then the monotonic time since, or since the last look when it was written', () => {
  const s0 = initialFreeze();
  assert.equal(heartbeatAge(s0, { atMs: 5, heartbeat: undefined }), undefined);
  assert.equal(heartbeatAge(s0, { atMs: 5, heartbeat: { mtimeMs: 1, ageMs: 7000 } }), 7000);
  assert.equal(heartbeatAge(s0, { atMs: 5, heartbeat: { mtimeMs: 1, ageMs: -300 } }), 0, 'an mtime in the future is fresh');
  const seen = { ...s0, last: { atMs: 1000, agentCpuMs: 0, heartbeat: { mtimeMs: 1, ageMs: 7000 }, claimsWorking: false, commandsOpen: 1 }, beatAgeMs: 7000 };
  assert.equal(heartbeatAge(seen, { atMs: 4000, heartbeat: { mtimeMs: 1, ageMs: 99_000 } }), 10_000);
  assert.equal(heartbeatAge(seen, { atMs: 4000, heartbeat: { mtimeMs: 2, ageMs: 99_000 } }), 3000);
  assert.equal(heartbeatAge(seen, { atMs: 4000, heartbeat: { mtimeMs: 2, ageMs: 100 } }), 100);
});

test('processViewNeeded: leaving the commands unread when it says so never changes what is told', () => {
  const fc = require('fast-check');
  const check = fc.record({
    cpu: fc.option(fc.double({ min: 0, max: 2, noNaN: true })),
    beatAgoS: fc.option(fc.integer({ min: 0, max: 4000 })),
    working: fc.boolean(),
    commands: fc.integer({ min: 0, max: 3 }),
  });
  fc.assert(fc.property(fc.array(check, { minLength: 1, maxLength: 40 }), (checks) => {
    let full = initialFreeze();
    let lazy = initialFreeze();
    let cpuMs = 0;
    checks.forEach((c, i) => {
      const atMs = 1e9 + i * 60_000;
      cpuMs += (c.cpu ?? 0) * 60_000;
      const heartbeat = c.beatAgoS === null ? undefined : { mtimeMs: atMs - c.beatAgoS * 1000, ageMs: c.beatAgoS * 1000 };
      const o = { atMs, agentCpuMs: c.cpu === null ? undefined : cpuMs, heartbeat, claimsWorking: c.working, commandsOpen: c.commands };
      const need = processViewNeeded(lazy, o, cfg);
      const unread = { ...o, commandsOpen: need.commands ? c.commands : 1 };
      const [f, tf] = freezeStep(full, o, cfg);
      const [l, tl] = freezeStep(lazy, unread, cfg);
      assert.deepEqual(tl, tf);
      assert.deepEqual(l.open, f.open);
      full = f;
      lazy = l;
    });
  }), { numRuns: 500 });
});

test('processViewNeeded: the commands only for a claim of work older than silentAfterS', () => {
  const now = 10_000_000;
  const at = (ageS, working) => processViewNeeded(initialFreeze(), { atMs: now, heartbeat: { mtimeMs: now - ageS * 1000, ageMs: ageS * 1000 }, claimsWorking: working }, cfg);
  assert.deepEqual(processViewNeeded(initialFreeze(), { atMs: now, heartbeat: undefined, claimsWorking: true }, cfg), { commands: false });
  assert.deepEqual(at(60, true), { commands: false });
  assert.deepEqual(at(cfg.silentAfterS, false), { commands: false });
  assert.deepEqual(at(cfg.silentAfterS, true), { commands: true });
});

test('after a restart: a signal told before it stays open, is not told again, and its recovery is told, also when the heartbeat came back before the first check', () => {
  assert.equal(savedFreezeOf(initialFreeze()), undefined, 'nothing open: nothing to keep');
  const saved = savedFreezeOf({ ...initialFreeze(), open: ['missing'], busySinceMs: undefined });
  assert.deepEqual(saved, { open: ['missing'] });
  // still stale after the restart: nothing told; then written: recovered
  const still = run([{ cpu: 0, beat: -200_000 }, { cpu: 0, beat: -200_000 }, { cpu: 0, beat: 100_000 }], restoredFreeze(saved, true, 0, PEGGED_MS));
  assert.deepEqual(kinds(still.told), ['', '', 'recovered']);
  // renewed while sbd was down: the first check tells the recovery (a fresh state would tell nothing at all)
  assert.deepEqual(kinds(run([{ cpu: 0, beat: -1000 }], restoredFreeze(saved, true, 0, PEGGED_MS)).told), ['recovered']);
  assert.deepEqual(kinds(run([{ cpu: 0, beat: -1000 }]).told), [''], 'without the saved signal nothing would ever say it recovered');
});

test('after a restart: pegged goes on from its saved busy streak until a calm interval; on another boot, or a streak from the future, it does not', () => {
  const saved = savedFreezeOf({ ...initialFreeze(), open: ['pegged'], busySinceMs: -400_000 });
  assert.deepEqual(saved, { open: ['pegged'], busySinceMs: -400_000 });
  const { told } = run([{ cpu: 0.9 }, { cpu: 0.9 }, { cpu: 0.1 }], restoredFreeze(saved, true, 0, PEGGED_MS));
  assert.deepEqual(kinds(told), ['', '', 'recovered'], 'still spinning: held, not told again; calm: recovered');
  // a streak it cannot trust is taken as just long enough: held until a measured calm interval
  assert.equal(restoredFreeze(saved, false, 0, PEGGED_MS).busySinceMs, -PEGGED_MS, "another boot's monotonic clock");
  assert.equal(restoredFreeze({ open: ['pegged'], busySinceMs: 5000 }, true, 0, PEGGED_MS).busySinceMs, -PEGGED_MS, 'a streak that began after now');
  assert.equal(restoredFreeze({ open: ['pegged'] }, true, 0, PEGGED_MS).busySinceMs, -PEGGED_MS, 'none saved');
  assert.deepEqual(kinds(run([{ cpu: 0.9 }, { cpu: 0.9 }, { cpu: 0.1 }], restoredFreeze(saved, false, 0, PEGGED_MS)).told), ['', '', 'recovered'], 'untrusted: no recovery told before an interval was measured');
  // reminders count from the restore, not from the predecessor's last telling
  const hour = 3_600_000;
  const [, reminded] = freezeStep(restoredFreeze({ open: ['missing'] }, true, 10 * hour, PEGGED_MS), { atMs: 10 * hour + 60_000, agentCpuMs: 0, heartbeat: { mtimeMs: 0, ageMs: 10 * hour }, claimsWorking: false, commandsOpen: 1 }, cfg);
  assert.deepEqual(reminded, []);
});

test('after a restart: a busy streak is kept only with pegged open, so a streak that ended under an open missing is never told pegged', () => {
  // busy from 60 s, missing open at 180 s, calm from 300 s (the streak ends, missing stays open: no save)
  assert.deepEqual(savedFreezeOf({ ...initialFreeze(), open: ['missing'], busySinceMs: 60_000 }), { open: ['missing'] }, 'not saved beside missing alone');
  assert.deepEqual(savedFreezeOf({ ...initialFreeze(), open: ['missing', 'pegged'], busySinceMs: 60_000 }), { open: ['missing', 'pegged'], busySinceMs: 60_000 });
  // an older record with a streak beside missing alone: not taken up; calm agent, old heartbeat: nothing told
  const restored = restoredFreeze({ open: ['missing'], busySinceMs: -400_000 }, true, 0, PEGGED_MS);
  assert.equal(restored.busySinceMs, undefined);
  assert.deepEqual(kinds(run([{ cpu: 0, beat: -500_000 }, { cpu: 0, beat: -500_000 }], restored).told), ['', '']);
});
