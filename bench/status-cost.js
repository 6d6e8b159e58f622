#!/usr/bin/env node
// @ts-check
'use strict';
// `npm run bench:status` (issue 15, item 2): what `sbctl status --json` costs against Node's own
// start (`node -e 0`), side by side in one run, with a fake sbd of SESSIONS (500) sessions on a
// real dbus-daemon of its own: the fast path (one GetStatus call, no dbus-next, no commander) and
// the full program (`sbctl -c FILE status --json`: commander, dbus-next, the properties and two
// lists). Runs on the host or in the lab guest (both have dbus-daemon); ROUNDS (15) runs each,
// interleaved. Prints wall-clock medians (min-max) and each against `node -e 0`.
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { spawn } = require('node:child_process');
const { performance } = require('node:perf_hooks');
const dbus = require('dbus-next');
const { spread } = require('./lib');
const { privateBus } = require('../test/support/dbus-daemon');
/** "412 ms (380–455)" */
const ms = (sp) => `${Math.round(sp.median * 1000)} ms (${Math.round(sp.min * 1000)}–${Math.round(sp.max * 1000)})`;

const root = path.resolve(__dirname, '..');
const SBCTL = path.join(root, 'dist/cli/main.js');
const { exportService } = require(path.join(root, 'dist/daemon/bus-service.js'));
const SESSIONS = Number(process.env.SESSIONS ?? 500);
const ROUNDS = Number(process.env.ROUNDS ?? 15);
const MiB = 2 ** 20;

async function main() {
  const bus = await privateBus();
  const { address } = bus;
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sb-bench-status-'));
  const sbd = await dbus.sessionBus({ busAddress: address });
  const rows = Array.from({ length: SESSIONS }, (_, i) => ({
    name: `s${i}`, unit: `s${i}.scope`, state: 'ok', deadlineS: null, lastAction: null, feed: 'psi', currentBytes: 40 * MiB, highBytes: 64 * MiB,
    maxBytes: Infinity, swapMaxBytes: 0, anonShare: 0.9, pressureFullAvg10: 0, processes: 4, biggest: { name: 'node', pid: 1000 + i, rssBytes: 30 * MiB }, heartbeatAgeS: 3,
  }));
  const health = { running: true, pid: process.pid, version: 'bench', uptimeS: 1, feed: 'psi', observeOnly: false, slices: ['sessions.slice'] };
  await exportService(sbd, { health: () => health, sessions: () => rows, slices: () => [] });
  const env = { ...process.env, DBUS_SESSION_BUS_ADDRESS: address };
  const cfg = path.join(dir, 'config.json');
  fs.writeFileSync(cfg, '{}');
  const variants = {
    'node -e 0': [process.execPath, ['-e', '0']],
    'sbctl status --json (one GetStatus call)': [process.execPath, [SBCTL, 'status', '--json']],
    'sbctl -c FILE status --json (the full program)': [process.execPath, [SBCTL, '-c', cfg, 'status', '--json']],
  };
  /** @type {Record<string, number[]>} */
  const times = Object.fromEntries(Object.keys(variants).map((k) => [k, []]));
  const runOnce = ([cmd, args]) => new Promise((resolve, reject) => {
    const t0 = performance.now();
    const c = spawn(cmd, args, { env, stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    c.stdout.on('data', (d) => { out += d; });
    c.on('exit', (code) => (code === 0 ? resolve([(performance.now() - t0) / 1000, out]) : reject(new Error(`${args.join(' ')}: exit ${code}`))));
  });
  for (const v of Object.values(variants)) await runOnce(v); // warm the page cache
  const [, fast] = await runOnce(variants['sbctl status --json (one GetStatus call)']);
  const [, full] = await runOnce(variants['sbctl -c FILE status --json (the full program)']);
  if (JSON.parse(fast).sessions.length !== SESSIONS || fast !== full) throw new Error('the two paths do not print the same report');
  for (let r = 0; r < ROUNDS; r++) for (const [k, v] of Object.entries(variants)) times[k].push((await runOnce(v))[0]);
  const base = spread(times['node -e 0']);
  console.log(`${SESSIONS} sessions, ${ROUNDS} runs each, interleaved; ${os.cpus().length} CPUs; node ${process.version}`);
  console.log('| command | wall: median (min–max) | against `node -e 0` |');
  console.log('| --- | --- | --- |');
  for (const [k, ts] of Object.entries(times)) {
    const s = spread(ts);
    console.log(`| ${k} | ${ms(s)} | ${(s.median / base.median).toFixed(2)}× |`);
  }
  sbd.disconnect();
  bus.stop();
  fs.rmSync(dir, { recursive: true, force: true });
}
main().catch((e) => {
  console.error(e);
  process.exit(1);
});
