// @ts-check
'use strict';
// The table bench:storm prints (bench/storm.js), apart so that its statistics are unit-tested.
const fs = require('node:fs');
const path = require('node:path');
const { spread, secs, textOf, keptFile } = require('./lib');
const { stallOnset } = require('./stall-onset');

/** The markdown table of a storm run (rows: run, unit, onset ms, verdict ms, and when known the
 * stall onset ms: where the stall that holds the verdict began, bench/stall-onset.js). `cpu`: sbd's
 * CPU from the release to the last verdict (sbdCpu), when the guest's cgroup readings have it. */
function stormTable(rows, sbd, n, cpu) {
  const of = (run) => rows.filter((x) => x[0] === run);
  const lags = (xs) => xs.filter((x) => x[2] && x[3]).map((x) => (Number(x[3]) - Number(x[2])) / 1000);
  const fromStall = (xs) => xs.filter((x) => x[4] && x[3]).map((x) => (Number(x[3]) - Number(x[4])) / 1000);
  const stallCell = (xs) => { const f = fromStall(xs); return f.length ? `${secs(spread(f))} (${f.length})` : '–'; };
  const single = spread(lags(of('single')));
  const st = of('storm');
  const sp = spread(lags(st));
  const onsets = st.filter((x) => x[2]).map((x) => Number(x[2]));
  const ratio = sp && single ? `${(sp.max / single.median).toFixed(2)}×` : '-';
  // item 5's ratio as RESULTS states it: the storm's worst from its stall's onset over the singles' median from theirs
  const singleStall = spread(fromStall(of('single')));
  const stormStall = spread(fromStall(st));
  const stallRatio = singleStall && stormStall ? `${(stormStall.max / singleStall.median).toFixed(2)}×` : '–';
  return [
    '| run | sessions | reached the brake | onsets spread over | verdicts | onset to verdict: median (min–max) | worst | worst / single median | stall onset to verdict (sessions) | worst / single median, from the stall\'s onset | sbd RSS after | sbd CPU, release to last verdict | sbd CPU, release to the watch\'s end |',
    '| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |',
    `| one at a time | ${of('single').length} | ${of('single').filter((x) => x[2]).length} | – | ${lags(of('single')).length} | ${secs(single)} | ${single ? single.max.toFixed(1) : '-'} s | – | ${stallCell(of('single'))} | – | – | – | – |`,
    `| storm | ${n} | ${onsets.length} | ${onsets.length ? ((Math.max(...onsets) - Math.min(...onsets)) / 1000).toFixed(1) : '-'} s | ${lags(st).length} | ${secs(sp)} | ${sp ? sp.max.toFixed(1) : '-'} s | ${ratio} | ${stallCell(st)} | ${stallRatio} | ${(Number(sbd.sbd_rss_kib) / 1024).toFixed(0)} MiB | ${cpu ? `${cpu.cpuS.toFixed(1)} s in ${cpu.overS.toFixed(1)} s${cpu.own ? '' : ` (${cpu.cgroup})`}` : '–'} | ${sbd.sbd_cpu_s_during_storm} s |`,
  ].join('\n');
}

/**
 * The rows with each one's stall onset as a 5th column (pure): where the stall that holds its
 * verdict began, from its memory.pressure full totals read in the guest's 0.5 s rounds
 * (`pressure`: unit -> [{ atMs, fullUs }]); '' when not found or not read.
 */
function withStallOnsets(rows, pressure) {
  return rows.map((x) => {
    const p = pressure[x[1]];
    const at = p && x[3] ? stallOnset(p, Number(x[3]), { binMs: 500 }) : undefined;
    return [...x.slice(0, 4), at === undefined ? '' : String(Math.round(at))];
  });
}

/** Every pressure-*.json(.gz) of a results directory as one unit -> readings map. */
function pressureOf(dir) {
  const all = {};
  for (const f of fs.readdirSync(dir).filter((x) => /^pressure-.*\.json(\.gz)?$/.test(x))) Object.assign(all, JSON.parse(textOf(path.join(dir, f))));
  return all;
}

/**
 * Who had the guest's CPU from `fromS` to `toS` (pure), from bench/guest/storm.sh's cgroup-cpu.txt:
 * one line a second, `t=EPOCH_S /proc/stat=USER NICE SYSTEM IDLE …` then `CGROUP/cpu.stat=USAGE_US`
 * for each cgroup. Each cgroup's use in % of one CPU over the readings that span the interval
 * (the last at or before `fromS`, the first at or after `toS`), the guest's busy share of all its
 * CPUs from /proc/stat, and the interval they cover. Undefined without two readings around it.
 */
function cpuShares(text, fromS, toS) {
  const readings = text.trim().split('\n').filter(Boolean).map((line) => {
    const t = Number(/^t=(\S+)/.exec(line)?.[1]);
    const stat = (/ \/proc\/stat=([\d ]+?)(?= \S+=|$)/.exec(line)?.[1] ?? '').trim().split(/ +/).map(Number);
    const usage = new Map([...line.matchAll(/ (\S*?)\/?cpu\.stat=(\d+)/g)].map((m) => [m[1] || '/', Number(m[2])]));
    return { t, stat, usage };
  });
  const a = readings.filter((r) => r.t <= fromS).pop();
  const b = readings.find((r) => r.t >= toS);
  if (!a || !b || b.t <= a.t) return undefined;
  const dt = b.t - a.t;
  const ticks = b.stat.map((v, i) => v - (a.stat[i] ?? 0));
  const all = ticks.reduce((x, y) => x + y, 0);
  const idle = (ticks[3] ?? 0) + (ticks[4] ?? 0); // idle and iowait
  const cgroups = Object.fromEntries([...b.usage].filter(([k]) => a.usage.has(k)).map(([k, v]) => [k, ((v - (a.usage.get(k) ?? 0)) / 1e6 / dt) * 100]));
  return { fromS: a.t, toS: b.t, busyShare: all > 0 ? 1 - idle / all : undefined, cgroups };
}

const USER_MANAGER = 'user.slice/user-1000.slice/user@1000.service/';
const SBD_CGROUP = 'app.slice/sbd.service';
/**
 * sbd's CPU seconds over the readings that span `shares` (pure). `cgroup` is sbd's own under the
 * user manager, as storm.sh recorded it (storm-sbd.txt's sbd_cgroup; session 14's runs put it
 * straight under the manager). Runs kept before storm.sh read sbd.service's own cpu.stat have
 * only its slice's (app.slice): nothing else runs there in the storm guest (its other child is
 * dbus.socket, a unit whose cgroup holds no process; storm-sbd.txt's app_slice_children). The
 * answer's `cgroup` says which was read; undefined when neither was. `sbd_cpu_s_during_storm`
 * (storm-sbd.txt) is not this: it is taken after the onset watcher's last rounds,
 * STALL_WATCH_MS (30 s) past the last breach.
 */
function sbdCpu(shares, cgroup = SBD_CGROUP) {
  const slice = cgroup.includes('/') ? cgroup.slice(0, cgroup.lastIndexOf('/')) : undefined;
  const read = [cgroup, slice].find((c) => c !== undefined && shares.cgroups[USER_MANAGER + c] !== undefined);
  if (read === undefined) return undefined;
  const overS = shares.toS - shares.fromS;
  return { cpuS: (shares.cgroups[USER_MANAGER + read] / 100) * overS, overS, cgroup: read, own: read === cgroup };
}

/** One line of the CPU shares of the user manager's children and of the bench's own cgroup (`watcher`: its onset watcher's, /proc/self/cgroup). */
function cpuLine(shares, watcher) {
  const um = USER_MANAGER;
  const pct = (v) => `${v.toFixed(0)} %`;
  const parts = Object.entries(shares.cgroups).filter(([k]) => k.startsWith(um) && !k.slice(um.length).includes('/')).sort((x, y) => y[1] - x[1]).map(([k, v]) => `${k.slice(um.length)} ${pct(v)}`);
  const w = watcher && shares.cgroups[watcher.replace(/^0::\//, '')];
  return `CPU from the release to the last verdict (${(shares.toS - shares.fromS).toFixed(1)} s, % of one CPU): ${parts.join(', ')}${w !== undefined ? `; the bench's own processes, its onset watcher among them (${watcher.replace(/^0::\//, '')}) ${pct(w)}` : ''}; the guest busy ${shares.busyShare === undefined ? '?' : pct(shares.busyShare * 100)} of all its CPUs`;
}

/** The CPU shares from the release to the storm's last verdict of a results directory, from its
 * cgroup-cpu.txt(.gz); undefined when it has none or no verdict. */
function stormCpu(dir, rows, sbd) {
  const file = keptFile(dir, 'cgroup-cpu.txt');
  const verdicts = rows.filter((x) => x[0] === 'storm' && x[3]).map((x) => Number(x[3]));
  if (!file || !verdicts.length) return undefined;
  return cpuShares(textOf(file), Number(sbd.released_at_ms) / 1000, Math.max(...verdicts) / 1000);
}

/** What bench:storm prints of a results directory: the table, then who had the CPU from the
 * release to the last verdict (when the guest's cgroup readings are there). */
function stormReport(dir, rows, sbd, n) {
  const shares = stormCpu(dir, rows, sbd);
  const table = stormTable(withStallOnsets(rows, pressureOf(dir)), sbd, n, shares && sbdCpu(shares, sbd.sbd_cgroup));
  return shares ? `${table}\n\n${cpuLine(shares, sbd.watcher_cgroup)}` : table;
}

module.exports = { stormTable, withStallOnsets, pressureOf, cpuShares, cpuLine, sbdCpu, stormCpu, stormReport };

// node bench/storm-table.js DIR: the table of a kept run (storm.tsv, storm-sbd.txt, pressure-*.json)
if (require.main === module) {
  const dir = process.argv[2];
  if (!dir) {
    console.error('usage: node bench/storm-table.js RESULTS_DIR');
    process.exit(2);
  }
  const rows = fs.readFileSync(path.join(dir, 'storm.tsv'), 'utf8').trim().split('\n').slice(1).map((l) => l.split('\t'));
  const sbd = Object.fromEntries(fs.readFileSync(path.join(dir, 'storm-sbd.txt'), 'utf8').trim().split('\n').map((l) => l.split('\t')));
  console.log(stormReport(dir, rows, sbd, rows.filter((x) => x[0] === 'storm').length));
}
