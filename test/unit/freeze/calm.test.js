// @ts-check
'use strict';
// A calm parent answers for its sessions' agents (freeze/calm.ts): the bound, who it may answer
// for, and that the policy then tells pegged only from the next read's intervals on.
const test = require('node:test');
const assert = require('node:assert/strict');
const { calmOver, answeredByCalm, calmStep } = require('../../../dist/freeze/calm.js');
const { freezeStep, initialFreeze } = require('../../../dist/freeze/policy.js');
const { parseConfig } = require('../../../dist/config/load.js');

const cfg = parseConfig({}, 'defaults').freeze; // checks every 60 s; pegged 0.75 for 300 s

test('a parent under peggedCpuShare of one core over the span is calm; at or over it, not', () => {
  const prev = { atMs: 0, usageUs: 1_000_000 };
  assert.equal(calmOver(prev, { atMs: 60_000, usageUs: 1_000_000 + 44_999_000 }, 0.75), true); // 44.999 s of 45
  assert.equal(calmOver(prev, { atMs: 60_000, usageUs: 1_000_000 + 45_000_000 }, 0.75), false);
  assert.equal(calmOver(prev, { atMs: 60_000, usageUs: 1_000_000 + 120_000_000 }, 0.75), false); // two cores busy
});

test('no earlier reading, no time between, or a counter that went back: not calm (each agent is read)', () => {
  assert.equal(calmOver(undefined, { atMs: 60_000, usageUs: 0 }, 0.75), false);
  assert.equal(calmOver({ atMs: 60_000, usageUs: 0 }, { atMs: 60_000, usageUs: 0 }, 0.75), false);
  assert.equal(calmOver({ atMs: 0, usageUs: 9_000_000 }, { atMs: 60_000, usageUs: 10 }, 0.75), false); // a new cgroup of the same name
});

test('a calm parent answers only for a session with nothing open and no heartbeat', () => {
  const open = { ...initialFreeze(), open: ['pegged'] };
  assert.equal(answeredByCalm(undefined, false), true);
  assert.equal(answeredByCalm(initialFreeze(), false), true);
  assert.equal(answeredByCalm(initialFreeze(), true), false); // missing and silent need the heartbeat and the agent
  assert.equal(answeredByCalm(open, false), false); // its recovery is told with what the agent shows
});

test('the calm step ends a busy streak; the same state when there is nothing to end', () => {
  const calmState = initialFreeze();
  assert.equal(calmStep(calmState), calmState);
  const busy = { ...initialFreeze(), cpuFrom: { atMs: 60_000, cpuMs: 60_000 }, share: 0.9, busySinceMs: 0 };
  assert.deepEqual(calmStep(busy), { ...busy, cpuFrom: undefined, share: undefined, busySinceMs: undefined });
});

test('after a calm minute, an agent that spins is told pegged one check later than when read throughout', () => {
  // agent spinning at a full core from t = 60 s on; checks every 60 s
  const cpuAt = (atMs) => Math.max(0, atMs - 60_000);
  const observe = (atMs) => ({ atMs, agentCpuMs: cpuAt(atMs), heartbeat: undefined, claimsWorking: false, commandsOpen: 1 });
  const peggedAt = (calmAt0) => {
    let s = initialFreeze();
    for (let atMs = 0; atMs <= 600_000; atMs += 60_000) {
      if (calmAt0 && atMs === 60_000) { s = calmStep(s); continue; } // [0, 60 s] was calm: not read
      const [next, told] = freezeStep(s, observe(atMs), cfg);
      s = next;
      if (told.some((t) => t.kind === 'signal' && t.signal === 'pegged')) return atMs;
    }
    return undefined;
  };
  assert.equal(peggedAt(false), 360_000); // busy from 60 s, 300 s of it
  assert.equal(peggedAt(true), 420_000);
});
