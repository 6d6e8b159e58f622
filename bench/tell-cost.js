// @ts-check
'use strict';
// What telling one incident costs sbd's main thread before V8 has compiled the code that tells it
// (issue 15, item 5: in bench:storm's 200 verdicts, each told once, the journal entry and the
// Incident signal's encoding cost 1.4 ms and 1.5 ms of the emulated guest's CPU, and grew cheaper
// as the storm went on). Each figure comes from fresh processes, as sbd's first storm is:
//   first 200  the first 200 tells of a new process, V8 as configured;
//   interpreter the same with V8's compilers off (--no-opt --no-sparkplug --no-maglev), the code
//              as it runs before any tier-up, which under the guest's emulation lasts the storm;
//   warm       after 20,000 tells.
// The baseline, measured in the same processes: JSON.stringify of the same incident and
// Buffer.from of the text, the least any encoding of it costs. `--against DIR` also measures
// another build's dist (a clean checkout of an older commit, built) side by side.
//   node bench/tell-cost.js [--against /tmp/old/dist] [--runs 5]
const { spawnSync } = require('node:child_process');
const path = require('node:path');
const { spread } = require('./lib');

const args = process.argv.slice(2);
const opt = (name, dflt) => {
  const i = args.indexOf(name);
  return i === -1 ? dflt : args[i + 1];
};
const RUNS = Number(opt('--runs', '5'));
const against = opt('--against', undefined);
const OURS = path.join(__dirname, '..', 'dist');
const INTERPRETER = ['--no-opt', '--no-sparkplug', '--no-maglev'];

/** The child: tells `n` incidents (µs each, by part) from the dist at `dir`, timing only the last `last` of them. */
function child(dir, n, last) {
  const { encodeEntry } = require(path.join(dir, 'journal/encode.js'));
  const { incidentEntry } = require(path.join(dir, 'journal/incident-entry.js'));
  const { incidentToBus, INCIDENT_SIGNATURE } = require(path.join(dir, 'daemon/bus-types.js'));
  const { encodeSignal } = require(path.join(dir, 'bus-lite/wire.js'));
  // a standing-still verdict's incident as controller.ts tells it
  const incident = (k) => ({
    type: 'standing-still', unit: `storm-${k}.scope`, session: `storm-${k}`, atMs: 1_796_558_100_261 + k, observeOnly: false,
    message: `standing still against its own brake (standing-still; hot: share 0.${k % 90 + 10} at or above 0.2; share 0.${k % 90 + 10}; anon 1.00; evidence own-high-moved+near-own-brake; hot windows 3; deadline in 600 s)`,
    share: 0.5 + (k % 50) / 100, anonShare: 0.99 + (k % 10) / 1000, evidence: ['own-high-moved', 'near-own-brake'], deadlineS: 600,
  });
  const t = { journal: 0n, signal: 0n, json: 0n };
  let bytes = 0;
  for (let k = 0; k < n; k++) {
    const i = incident(k);
    const a = process.hrtime.bigint();
    bytes += encodeEntry(incidentEntry(i, 4)).length;
    const b = process.hrtime.bigint();
    bytes += encodeSignal(k + 1, { path: '/dev/sessionbrake/Manager1', interface: 'dev.sessionbrake.Manager1', member: 'Incident', signature: INCIDENT_SIGNATURE, body: incidentToBus(i) }).length;
    const c = process.hrtime.bigint();
    bytes += Buffer.from(JSON.stringify(i)).length;
    const d = process.hrtime.bigint();
    if (k >= n - last) {
      t.journal += b - a;
      t.signal += c - b;
      t.json += d - c;
    }
  }
  const us = (x) => Number(x) / last / 1000;
  process.stdout.write(JSON.stringify({ journal: us(t.journal), signal: us(t.signal), json: us(t.json), bytes }));
}

if (process.env.TELL_COST_CHILD) {
  const [dir, n, last] = process.env.TELL_COST_CHILD.split(':');
  child(dir, Number(n), Number(last));
} else {
  const modes = [
    { name: 'first 200', flags: [], n: 200, last: 200 },
    { name: 'interpreter', flags: INTERPRETER, n: 200, last: 200 },
    { name: 'warm', flags: [], n: 20_200, last: 200 },
  ];
  const builds = [['this build', OURS], ...(against ? [['--against', path.resolve(against)]] : [])];
  const one = (dir, m) => {
    const r = spawnSync(process.execPath, [...m.flags, __filename], { env: { ...process.env, TELL_COST_CHILD: `${dir}:${m.n}:${m.last}` }, encoding: 'utf8' });
    if (r.status !== 0) throw new Error(`the child for ${dir} (${m.name}) failed: ${r.stderr.trim().split('\n').slice(-3).join(' ')}`);
    return JSON.parse(r.stdout);
  };
  const f = (s) => `${s.median.toFixed(1)} µs (${s.min.toFixed(1)}–${s.max.toFixed(1)})`;
  console.log(`One incident told: µs per tell, median (min–max) of ${RUNS} fresh processes each, node ${process.version}`);
  console.log('| build | V8 | journal entry | Incident signal | both | baseline: JSON.stringify + Buffer.from | both / baseline |');
  console.log('| --- | --- | --- | --- | --- | --- | --- |');
  const both = {};
  for (const m of modes) {
    // interleaved: a run of each build in turn, so that the machine's noise falls on both
    const rows = builds.map(() => []);
    for (let r = 0; r < RUNS; r++) builds.forEach(([, dir], b) => rows[b].push(one(dir, m)));
    builds.forEach(([label], b) => {
      const j = spread(rows[b].map((x) => x.journal));
      const s = spread(rows[b].map((x) => x.signal));
      const sum = spread(rows[b].map((x) => x.journal + x.signal));
      const base = spread(rows[b].map((x) => x.json));
      if (!j || !s || !sum || !base) throw new Error('no runs');
      both[`${label} ${m.name}`] = sum.median;
      console.log(`| ${label === '--against' ? against : label} | ${m.name} | ${f(j)} | ${f(s)} | ${f(sum)} | ${f(base)} | ${(sum.median / base.median).toFixed(1)}× |`);
    });
  }
  if (against) for (const m of modes) console.log(`${m.name}: this build / --against = ${(both[`this build ${m.name}`] / both[`--against ${m.name}`]).toFixed(2)}×`);
}
