// @ts-check
'use strict';
// A monitor manager over a fake sbd for the runners' tests (http, file, process): notices are
// collected, records are real files in a temporary directory, and watched paths are either only
// recorded or, with realWatch, watched by the real addon's FileWatch, whose events reach the
// manager as sbd's do (src/daemon/service.ts).
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { MonitorManager } = require('../../../dist/monitor/manager.js');
const { FileWatch } = require('../../../dist/native.js');

const realSetTimeout = setTimeout;
/** Wait real time, even while a test has faked setTimeout. */
const sleepReal = (ms) => new Promise((r) => realSetTimeout(r, ms));

/** Poll `pred` in real time until it holds (returns its value) or `ms` pass. */
async function until(pred, what, ms = 5000) {
  const end = Date.now() + ms;
  for (;;) {
    const v = pred();
    if (v) return v;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await sleepReal(5);
  }
}

/**
 * @param {import('node:test').TestContext} t
 * @param {{realWatch?: boolean, dir?: string}} [opts]
 */
function fakeHost(t, opts = {}) {
  const dir = opts.dir ?? fs.mkdtempSync(path.join(os.tmpdir(), 'sb-probes-'));
  if (!opts.dir) t.after(() => fs.rmSync(dir, { recursive: true, force: true }));
  /** @type {Array<any>} */
  const notices = [];
  /** @type {Array<any>} */
  const logs = [];
  /** @type {Map<string, {entries?: boolean}>} */
  const watched = new Map();
  /** @type {any} */
  let m;
  const watch = opts.realWatch ? new FileWatch(({ path: p, kind }) => m.onFile(p, kind)) : undefined;
  m = new MonitorManager({
    recordsDir: path.join(dir, 'records'), outputDir: path.join(dir, 'out'),
    startTransientService: async () => { throw new Error('no units here'); },
    stopUnit: async () => {},
    getUnit: async () => undefined,
    watchFile: (f, o) => { watch?.add(f, o); watched.set(f, o ?? {}); },
    unwatchFile: (f) => { watch?.remove(f); watched.delete(f); },
    session: (id) => (id === 'fix' ? { id: 'fix', unit: 'sb-fix.scope', invocationId: 'a'.repeat(32), slice: 'sessions.slice', memoryHigh: 2 ** 29 } : undefined),
    owner: { busName: ':1.7', epoch: 1 },
    notify: (session, n) => (notices.push({ session, ...n }), { ...n, id: notices.length }),
    resolveProgram: (name) => `/usr/bin/${name}`,
    monotonicMs: () => performance.now(),
    log: (level, msg, fields) => logs.push({ level, msg, fields }),
  });
  t.after(() => { m.close(); watch?.close(); });
  return { m, dir, notices, logs, watched, record: (id) => m.list('fix').find((r) => r.id === id) };
}

/**
 * setTimeout and clearTimeout replaced for the test: each timer is recorded (its delay and
 * callback) and fires only when the test says so (fire), so a backoff of minutes is checked at once.
 * @param {import('node:test').TestContext} t
 */
function fakeTimers(t) {
  /** @type {Array<{fn: () => void, ms: number, cleared: boolean, fired: boolean}>} */
  const timers = [];
  t.mock.method(globalThis, 'setTimeout', (/** @type {() => void} */ fn, /** @type {number} */ ms) => {
    const h = { fn, ms, cleared: false, fired: false, unref: () => h, ref: () => h, hasRef: () => false };
    timers.push(h);
    return h;
  });
  const realClear = clearTimeout;
  t.mock.method(globalThis, 'clearTimeout', (/** @type {any} */ h) => {
    if (h && typeof h === 'object' && 'cleared' in h) h.cleared = true;
    else realClear(h);
  });
  const pending = () => timers.filter((x) => !x.cleared && !x.fired);
  return {
    timers,
    pending,
    /** Fire the one pending timer (asserting there is exactly one; of about `ms`, within 50 ms, when given); returns its delay in ms. */
    fireOne(/** @type {number | undefined} */ ms = undefined) {
      const p = pending().filter((x) => ms === undefined || Math.abs(x.ms - ms) < 50);
      if (p.length !== 1) throw new Error(`expected one pending timer, found ${p.length} (${p.map((x) => x.ms).join(', ')})`);
      const [h] = p;
      h.fired = true;
      h.fn();
      return h.ms;
    },
  };
}

module.exports = { fakeHost, fakeTimers, until, sleepReal };
