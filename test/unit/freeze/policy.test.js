// @ts-check
'use strict';
const test = require('node:test');
const assert = require('node:assert/strict');
const { freezeStep, initialFreeze } = require('../../../dist/freeze/policy.js');
const { parseConfig } = require('../../../dist/config/load.js');

const cfg = parseConfig({}, 'defaults').freeze; // checks every 60 s; pegged 0.75 for 300 s; missing 180 s; silent 1800 s

/** Observations one check apart; `cpu` is the share of a core used in each interval. */
function run(steps, start = initialFreeze()) {
  let s = start;
  let cpuUs = 0;
  const told = [];
  steps.forEach((st, i) => {
    cpuUs += (st.cpu ?? 0) * 60e6;
    const [next, t] = freezeStep(s, { atMs: i * 60_000, cpuUsageUs: cpuUs, heartbeatMs: st.beat, claimsWorking: st.working ?? false, commandsOpen: st.commands ?? 1, agentAlive: st.alive ?? true }, cfg);
    s = next;
    told.push(t);
  });
  return { state: s, told };
}

test('pegged: five busy minutes in a row without a heartbeat, told once, then recovered', () => {
  const steps = [{ cpu: 0 }, ...Array(6).fill({ cpu: 0.9 }), { cpu: 0.1 }];
  const { told } = run(steps);
  const kinds = told.map((t) => t.map((x) => x.kind === 'signal' ? x.signal : x.kind).join(','));
  assert.deepEqual(kinds, ['', '', '', '', '', 'pegged', '', 'recovered']);
});

test('pegged: one calm minute starts the count over; a heartbeat during the busy spell means no freeze', () => {
  const calm = run([{ cpu: 0 }, { cpu: 0.9 }, { cpu: 0.9 }, { cpu: 0.9 }, { cpu: 0.5 }, { cpu: 0.9 }, { cpu: 0.9 }, { cpu: 0.9 }]);
  assert.ok(calm.told.every((t) => t.length === 0));
  const beating = run(Array.from({ length: 8 }, (_, i) => ({ cpu: 0.9, beat: i * 60_000 })));
  assert.ok(beating.told.every((t) => t.length === 0), 'busy, but it says it is working');
});

test('missing: alive without a heartbeat for 3 minutes; recovered when it beats again; a dead agent is not missing', () => {
  const { told } = run([{ beat: 0 }, { beat: 0 }, { beat: 0 }, { beat: 0 }, { beat: 200_000 }]);
  assert.deepEqual(told.map((t) => t.map((x) => x.kind === 'signal' ? x.signal : x.kind)), [[], [], [], ['missing'], ['recovered']]);
  const dead = run([{ beat: 0, alive: false }, { beat: 0, alive: false }, { beat: 0, alive: false }, { beat: 0, alive: false }]);
  assert.ok(dead.told.every((t) => t.length === 0));
});

test('silent: claims to work, no heartbeat for 30 minutes, no command open; another signal is told on its own', () => {
  const steps = Array.from({ length: 32 }, () => ({ beat: 0, working: true, commands: 0 }));
  const { told } = run(steps);
  const signals = told.flat().filter((x) => x.kind === 'signal').map((x) => x.signal);
  assert.deepEqual(signals, ['missing', 'silent'], 'missing first (3 min), then silent joins (30 min), each told once');
  const busy = run(Array.from({ length: 32 }, () => ({ beat: 0, working: true, commands: 2 })));
  assert.ok(!busy.told.flat().some((x) => x.kind === 'signal' && x.signal === 'silent'), 'a command is open: not silent');
});

test('an open incident is reminded about after an hour, not before', () => {
  const steps = Array.from({ length: 70 }, () => ({ beat: 0 }));
  const { told } = run(steps);
  const at = told.map((t, i) => (t.length ? `${i}:${t.map((x) => x.kind).join(',')}` : '')).filter(Boolean);
  assert.deepEqual(at, ['3:signal', '63:reminder']);
});

test('processViewNeeded: leaving the agent and the commands unread when it says so never changes what is told', () => {
  const fc = require('fast-check');
  const { processViewNeeded } = require('../../../dist/freeze/policy.js');
  const check = fc.record({
    cpu: fc.double({ min: 0, max: 2, noNaN: true }),
    beatAgoS: fc.option(fc.integer({ min: 0, max: 4000 })),
    working: fc.boolean(),
    commands: fc.integer({ min: 0, max: 3 }),
    alive: fc.boolean(),
  });
  fc.assert(fc.property(fc.array(check, { minLength: 1, maxLength: 40 }), (checks) => {
    let full = initialFreeze();
    let lazy = initialFreeze();
    let cpuUs = 0;
    checks.forEach((c, i) => {
      const atMs = 1e9 + i * 60_000;
      cpuUs += c.cpu * 60e6;
      const heartbeatMs = c.beatAgoS === null ? undefined : atMs - c.beatAgoS * 1000;
      const o = { atMs, cpuUsageUs: cpuUs, heartbeatMs, claimsWorking: c.working, commandsOpen: c.commands, agentAlive: c.alive };
      const need = processViewNeeded(heartbeatMs, c.working, atMs, cfg);
      const unread = { ...o, commandsOpen: need.commands ? c.commands : 1, agentAlive: need.agent ? c.alive : true };
      const [f, tf] = freezeStep(full, o, cfg);
      const [l, tl] = freezeStep(lazy, unread, cfg);
      assert.deepEqual(tl, tf);
      assert.deepEqual(l.open, f.open);
      full = f;
      lazy = l;
    });
  }), { numRuns: 500 });
});

test('processViewNeeded: nothing to read with a fresh heartbeat or none; the agent once missing is possible; commands only for a silent claim', () => {
  const { processViewNeeded } = require('../../../dist/freeze/policy.js');
  const now = 10_000_000;
  assert.deepEqual(processViewNeeded(undefined, true, now, cfg), { agent: false, commands: false });
  assert.deepEqual(processViewNeeded(now - 60_000, true, now, cfg), { agent: false, commands: false });
  assert.deepEqual(processViewNeeded(now - cfg.missingAfterS * 1000, false, now, cfg), { agent: true, commands: false });
  assert.deepEqual(processViewNeeded(now - cfg.silentAfterS * 1000, false, now, cfg), { agent: true, commands: false });
  assert.deepEqual(processViewNeeded(now - cfg.silentAfterS * 1000, true, now, cfg), { agent: true, commands: true });
});
