// @ts-check
'use strict';
// A fake host for the monitor manager (src/monitor/runner.ts MonitorHost): real files under a
// temporary directory, a fake systemd that records what was asked of it, one session "fix" (and
// "other"), notices collected. The real systemd is the guest's.
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');

const MiB = 2 ** 20;

/** @param {import('node:test').TestContext} t */
function fakeMonitorHost(t, over = {}) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sb-monhost-'));
  t.after(() => fs.rmSync(dir, { recursive: true, force: true }));
  /** @type {string[]} */
  const calls = [];
  /** @type {any[]} */
  const notices = [];
  const units = new Map();
  const sessions = new Map([
    ['fix', { id: 'fix', unit: 'fix.scope', invocationId: 'a'.repeat(32), slice: 'sessions.slice', memoryHigh: 512 * MiB }],
    ['other', { id: 'other', unit: 'other.scope', invocationId: 'b'.repeat(32), slice: 'sessions.slice', memoryHigh: 512 * MiB }],
  ]);
  let invocations = 0;
  const host = {
    recordsDir: path.join(dir, 'records'), outputDir: path.join(dir, 'out'),
    startTransientService: async (/** @type {string} */ name) => {
      calls.push(`start ${name}`);
      const u = units.get(name);
      if (u && u.activeState === 'failed') throw new Error(`Unit ${name} was already loaded or has a fragment file.`);
      invocations += 1;
      units.set(name, { unit: name, activeState: 'active', result: 'success', invocationId: String(invocations).padStart(32, '0'), mainPid: 4000 + invocations, nRestarts: 0, mainStartedAtMs: 1_700_000_000_000 });
    },
    stopUnit: async (/** @type {string} */ name) => {
      calls.push(`stop ${name}`);
      const u = units.get(name);
      if (u && u.activeState !== 'failed') units.set(name, { ...u, activeState: 'inactive', mainPid: 0 });
    },
    resetFailedUnit: async (/** @type {string} */ name) => {
      calls.push(`reset-failed ${name}`);
      const u = units.get(name);
      if (u && (u.activeState === 'failed' || u.activeState === 'inactive')) units.delete(name); // unloaded
    },
    getUnit: async (/** @type {string} */ name) => units.get(name),
    watchFile: () => {}, unwatchFile: () => {},
    session: (/** @type {string} */ id) => sessions.get(id),
    owner: { busName: ':1.7', epoch: 1_700_000_000_000 },
    notify: (/** @type {string} */ session, /** @type {any} */ n) => notices.push({ session, ...n }),
    resolveProgram: (/** @type {string} */ name) => `/usr/bin/${name}`,
    monotonicMs: () => performance.now(),
    log: () => {},
    ...over,
  };
  return { host, dir, calls, notices, units, sessions };
}

module.exports = { fakeMonitorHost, MiB };
