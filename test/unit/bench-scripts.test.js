// @ts-check
'use strict';
// The benchmarks run only on demand (they take the guest for many minutes): this keeps them from
// rotting between runs. Every script parses, and the statistics they print are right.
const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const path = require('node:path');
const { spawnSync } = require('node:child_process');

const bench = path.resolve(__dirname, '../../bench');
const files = (dir) => fs.readdirSync(dir).map((f) => path.join(dir, f));

test('bench: every shell script and every JavaScript file parses', () => {
  for (const f of [...files(bench), ...files(path.join(bench, 'guest'))]) {
    const r = f.endsWith('.sh') ? spawnSync('bash', ['-n', f], { encoding: 'utf8' }) : f.endsWith('.js') ? spawnSync(process.execPath, ['--check', f], { encoding: 'utf8' }) : undefined;
    if (r) assert.equal(r.status, 0, `${path.relative(bench, f)}: ${r.stderr}`);
  }
});

test('bench: spread() gives median, min and max; secs() prints them', () => {
  const { spread, secs } = require('../../bench/lib.js');
  assert.deepEqual(spread([4, 1, 3, 2, 5]), { median: 3, min: 1, max: 5 });
  assert.deepEqual(spread([2, 1]), { median: 1, min: 1, max: 2 }, 'even count: the lower middle');
  assert.equal(spread([]), undefined);
  assert.equal(secs(spread([3.71, 4.04, 3.95])), '4.0 s (3.7–4.0)');
  assert.equal(secs(undefined), '-');
});

test('bench: sbd\'s incidents read back from the journal, native entries and stdout lines alike (issue 14)', () => {
  const { incidentOf } = require('../../bench/guest/journal-incidents.js');
  const native = { MESSAGE: 'standing still against its own brake (...)', INCIDENT: 'standing-still', UNIT: 'storm-3.scope', SESSION: 'storm-3', _SOURCE_REALTIME_TIMESTAMP: '1796077774656704', __REALTIME_TIMESTAMP: '1796077774657000', CULPRIT: undefined, RULE: undefined };
  assert.deepEqual(incidentOf(native), { event: 'standing-still', unit: 'storm-3.scope', session: 'storm-3', atMs: 1796077774657, culprit: undefined, rule: undefined });
  const line = { event: 'culprit', unit: 'b.scope', session: 'b', atMs: 5, rule: 'grew-most' };
  assert.deepEqual(incidentOf({ MESSAGE: JSON.stringify(line) }), line, 'a stdout JSON line (before issue 14, or a send that failed)');
  assert.deepEqual(incidentOf({ MESSAGE: `<4>${JSON.stringify(line)}` }), line);
  assert.equal(incidentOf({ MESSAGE: '{"event":"ready","msg":"sbd ready"}' }), undefined, 'a log line that is no incident');
  assert.equal(incidentOf({ MESSAGE: 'Started sbd.service' }), undefined);
  assert.equal(incidentOf({ MESSAGE: null }), undefined, 'a field journalctl did not show');
});

test('bench: the storm table sets the storm\'s worst against the singles\' median (issue 15, item 5)', () => {
  const { stormTable } = require('../../bench/storm-table.js');
  const rows = [
    ['single', 'single1-0.scope', '1000', '2500', '1200'], ['single', 'single2-0.scope', '1000', '2000', '1000'], ['single', 'single3-0.scope', '1000', '3000'],
    ['storm', 'storm-0.scope', '10000', '12000', '10500'], ['storm', 'storm-1.scope', '13000', '17000', '15000'], ['storm', 'storm-2.scope', '11000', ''], ['storm', 'storm-3.scope', '', ''],
  ];
  const sbd = { sbd_rss_kib: '65536', sbd_cpu_s_during_storm: '4.5' };
  const lines = stormTable(rows, sbd, 4, { cpuS: 3, overS: 4, cgroup: 'app.slice/sbd.service', own: true }).split('\n');
  assert.equal(lines[2], '| one at a time | 3 | 3 | – | 3 | 1.5 s (1.0–2.0) | 2.0 s | – | 1.0 s (1.0–1.3) (2) | – | – | – | – |');
  // storm: 3 reached the brake over 3 s, 2 verdicts (2 s and 4 s); the worst 4 s is 2.67× the singles' 1.5 s median;
  // from their stalls' onsets 1.5 and 2 s, the worst 2 s twice the singles' 1.0 s from theirs (the lower of two middles)
  // sbd's CPU to the last verdict, and apart from it what storm.sh measured to the onset watch's end
  assert.equal(lines[3], '| storm | 4 | 3 | 3.0 s | 2 | 2.0 s (2.0–4.0) | 4.0 s | 2.67× | 1.5 s (1.5–2.0) (2) | 2.00× | 64 MiB | 3.0 s in 4.0 s | 4.5 s |');
  assert.match(stormTable(rows, sbd, 4, { cpuS: 2, overS: 4, cgroup: 'app.slice', own: false }).split('\n')[3], /\| 2\.0 s in 4\.0 s \(app\.slice\) \| 4\.5 s \|$/, 'a kept run\'s figure says it is its slice\'s');
  assert.match(stormTable(rows, sbd, 4).split('\n')[3], /\| – \| 4\.5 s \|$/, 'no cgroup readings: no figure');
});

test('bench: the storm\'s stall onsets from its 0.5 s pressure readings, the 5th column of its rows', () => {
  const { withStallOnsets } = require('../../bench/storm-table.js');
  // stalled (0.8 of each 0.5 s) from 2,000 ms on; the verdict at 4,000 ms
  const readings = Array.from({ length: 11 }, (_, i) => ({ atMs: i * 500, fullUs: Math.max(0, i * 500 - 2000) * 800 }));
  const rows = withStallOnsets([['storm', 'storm-0.scope', '1500', '4000'], ['storm', 'storm-1.scope', '1500', ''], ['storm', 'storm-2.scope', '1500', '4000']], { 'storm-0.scope': readings, 'storm-1.scope': readings });
  assert.deepEqual(rows.map((x) => x[4]), ['2000', '', ''], 'found; no verdict; no readings');
});

test('bench: a .cpuprofile\'s self time per function, all of it or only under a named frame (issue 15)', () => {
  const { selfTimes, entries } = require('../../bench/cpuprofile.js');
  const frame = (functionName, url = 'file:///mnt/proj/dist/daemon/x.js', lineNumber = 0) => ({ functionName, url, lineNumber });
  // (root) -> GetStatus -> readFileUtf8; (root) -> tick; (root) -> GetStatus (self)
  const profile = {
    nodes: [
      { id: 1, callFrame: frame('(root)', ''), children: [2, 4] },
      { id: 2, callFrame: frame('GetStatus', 'file:///mnt/proj/dist/daemon/bus-service.js', 160), children: [3] },
      { id: 3, callFrame: frame('readFileUtf8', ''), children: [] },
      { id: 4, callFrame: frame('tick'), children: [] },
    ],
    // the time a sample stands for is the delta after it
    samples: [3, 3, 2, 4, 3, 4],
    timeDeltas: [0, 100, 50, 10, 300, 7],
  };
  const all = selfTimes(profile);
  assert.equal(all.totalUs, 100 + 50 + 10 + 300 + 7, 'the last sample stands for no time');
  assert.deepEqual(all.rows.map((r) => [r.name, r.selfUs]), [['tick dist/daemon/x.js:1', 300], ['readFileUtf8', 157], ['GetStatus dist/daemon/bus-service.js:161', 10]]);
  const under = selfTimes(profile, { under: 'GetStatus' });
  assert.equal(under.totalUs, 167);
  assert.deepEqual(under.rows.map((r) => r.name), ['readFileUtf8', 'GetStatus dist/daemon/bus-service.js:161']);
  assert.equal(entries(profile, 'GetStatus'), 2, 'two runs of samples under GetStatus, apart');
  // sample times: 0, 100, 150, 160, 460, 467 µs after the start
  const late = selfTimes(profile, { fromUs: 150 });
  assert.equal(late.totalUs, 10 + 300 + 7, 'the samples taken from 150 µs on');
  assert.deepEqual(late.rows.map((r) => [r.name, r.selfUs]), [['tick dist/daemon/x.js:1', 300], ['readFileUtf8', 7], ['GetStatus dist/daemon/bus-service.js:161', 10]].sort((a, b) => b[1] - a[1]));
  assert.equal(selfTimes(profile, { under: 'GetStatus', fromUs: 150 }).totalUs, 10 + 7);
  assert.equal(selfTimes(profile, { fromUs: 100, toUs: 460 }).totalUs, 50 + 10 + 300, 'the samples taken from 100 µs to before 460 µs');
});

test('bench: a .cpuprofile\'s time one level under a named frame, per callee (--callees)', () => {
  const { calleeTimes } = require('../../bench/cpuprofile.js');
  const frame = (functionName, url = 'file:///mnt/proj/dist/daemon/x.js') => ({ functionName, url, lineNumber: 0 });
  // (root) -> tell -> emit -> write; (root) -> tell -> journal; (root) -> tell (self); (root) -> idle
  const profile = {
    nodes: [
      { id: 1, callFrame: frame('(root)', ''), children: [2, 6] },
      { id: 2, callFrame: frame('tell'), children: [3, 5] },
      { id: 3, callFrame: frame('emit'), children: [4] },
      { id: 4, callFrame: frame('write', ''), children: [] },
      { id: 5, callFrame: frame('journal'), children: [] },
      { id: 6, callFrame: frame('(idle)', ''), children: [] },
    ],
    samples: [4, 3, 5, 2, 6, 4],
    timeDeltas: [0, 10, 20, 30, 40, 50],
  };
  assert.deepEqual(calleeTimes(profile, 'tell').map((r) => [r.name, r.totalUs]), [['(self)', 40], ['emit dist/daemon/x.js:1', 30], ['journal dist/daemon/x.js:1', 30]]);
  assert.deepEqual(calleeTimes(profile, 'tell', { fromUs: 30 }).map((r) => [r.name, r.totalUs]), [['(self)', 40], ['journal dist/daemon/x.js:1', 30], ['emit dist/daemon/x.js:1', 0]], 'the last sample stands for no time');
  assert.deepEqual(calleeTimes(profile, 'nothing'), []);
  const { treeLines } = require('../../bench/cpuprofile.js');
  const inMs = { ...profile, timeDeltas: profile.timeDeltas.map((d) => d * 1000) };
  assert.deepEqual(treeLines(inMs, { depth: 2 }), ['150 (root)', '  100 tell dist/daemon/x.js:1', '    30 emit dist/daemon/x.js:1', '    30 journal dist/daemon/x.js:1', '  50 (idle)'], '--tree: each frame\'s total, callees biggest first, two levels');
  assert.deepEqual(treeLines(inMs, { depth: 3, minUs: 35_000 }), ['150 (root)', '  100 tell dist/daemon/x.js:1', '  50 (idle)'], 'frames under --min left out');
});

test('bench:idle: wakeups and CPU a minute from a 60 s count, start times, the baseline beside (issue 15)', () => {
  const { parseTsv, table, perMin } = require('../../bench/idle.js');
  const head = 'sessions\tvariant\tseconds\tvoluntary_ctxt\tinvoluntary_ctxt\tcpu_s\trss_kib\tstatus_ms\tstart_ms\tadopted_ms\tstop_ms\tfds\tnofile_soft\tinotify_watches\tinotify_instances\tmax_user_watches\tmax_user_instances';
  const rows = parseTsv([head,
    '1000\tbase-start\t-\t-\t-\t-\t-\t-\tfailed-after-90500\t-\t-\t-\t-\t-\t-\t-\t-',
    '1000\tfeed\t30\t4\t2\t0.25\t81920\t3300/700\t6100\t21400\t4000\t2031\t524288\t2004\t1\t65536\t128',
    '1000\tfeed-stop\t-\t-\t-\t-\t-\t-\t-\t-\t37200\t-\t-\t-\t-\t-\t-',
  ].join('\n'));
  assert.equal(perMin(rows[1]), 12, '(4+2) in 30 s is 12 a minute');
  const line = table(rows).split('\n')[2];
  assert.equal(line, '| 1000 | 12 (8+4) | 0.50 | 80 MiB | 2031 (524288) | 2004 (1) | 6.1 s | 21.4 s | 37.2 s | failed (90.5 s) | - | - | - | - | - | 3.3 s (0.7 s) |');
});

test('bench:idle: FEED_VARIANTS rows beside the plain feed of their size; none, no table', () => {
  const { parseTsv, variantsTable } = require('../../bench/idle.js');
  const head = 'sessions\tvariant\tseconds\tvoluntary_ctxt\tinvoluntary_ctxt\tcpu_s\trss_kib';
  const rows = parseTsv([head,
    '10\tfeed\t60\t40\t5\t0.3\t61440',
    '1000\tfeed\t60\t60\t55\t4\t72704',
    '1000\tfeed-stop\t-\t-\t-\t-\t-',
    '1000\tfeed-nofreeze\t120\t90\t10\t2\t71680',
  ].join('\n'));
  assert.deepEqual(variantsTable(rows).split('\n').slice(2), [
    '| 1000 | feed | 115 (60+55) | 4.00 | 71 MiB |',
    '| 1000 | feed-nofreeze | 50 (45+5) | 1.00 | 70 MiB |',
  ]);
  assert.equal(variantsTable(rows.filter((x) => x.variant !== 'feed-nofreeze')), '');
});

test('profile-top: self time per function and per origin from a V8 CPU profile', () => {
  const { selfTimes, byOrigin } = require('../../bench/profile-top.js');
  const frame = (functionName, url) => ({ functionName, url, lineNumber: 0 });
  const profile = {
    nodes: [
      { id: 1, callFrame: frame('(root)', ''), children: [2, 3, 5] },
      { id: 2, callFrame: frame('Module._load', 'node:internal/modules/cjs/loader'), children: [4] },
      { id: 3, callFrame: frame('getUnit', 'file:///mnt/proj/dist/systemd/user-manager.js'), children: [6] },
      { id: 4, callFrame: frame('readFileUtf8', ''), children: [] },
      { id: 5, callFrame: frame('(garbage collector)', ''), children: [] },
      { id: 6, callFrame: frame('read', 'file:///mnt/proj/node_modules/dbus-next/lib/dbus-buffer.js'), children: [] },
    ],
    // each sample stands for the time until the next one; the last for nothing here
    samples: [4, 4, 6, 3, 5, 6],
    timeDeltas: [0, 1000, 1000, 2000, 1000, 3000],
    startTime: 0,
    endTime: 8000,
  };
  const { totalMs, rows } = selfTimes(profile);
  assert.equal(totalMs, 8);
  assert.deepEqual(rows.map((r) => [r.fn, r.selfMs]), [['(garbage collector)', 3], ['readFileUtf8', 2], ['read', 2], ['getUnit', 1]]);
  const origin = Object.fromEntries(byOrigin(profile).map((o) => [o.origin, o.ms]));
  assert.deepEqual(origin, { 'module loading': 2, 'node_modules/dbus-next': 2, 'dist/systemd': 1, '(garbage collector)': 3 }, 'a native frame under require() is module loading; one with no file under sbd\'s code is its caller\'s');
});

test('bench: detect-timeline places each wedge\'s wake, windows and verdict after its onset, from sbd\'s debug journal', () => {
  const { timelines } = require('../../bench/detect-timeline.js');
  const onset = Date.parse('2026-12-01T06:00:00.000Z');
  const tsv = 'variant\tname\tonset_ms\tverdict_ms\tacted_ms\talive\tgone\nfeed\tw-feed-1\t' + onset + '\t\t\t-\t-\t' + (onset + 250) + '\nfeed-2s\tw-feed-2s-1\t' + onset + '\t\t\t-\t-\n';
  const dir = '/sys/fs/cgroup/user.slice/user-1000.slice/user@1000.service/sessions.slice/w-feed-1.scope';
  const line = (ms, o) => JSON.stringify({ time: new Date(onset + ms).toISOString(), ...o });
  const log = [
    line(-60_000, { msg: 'waking', dir, why: 'an old wake of another wedge' }),
    line(400, { msg: 'waking', dir, why: 'psi-trigger' }),
    line(400, { event: 'verdict', unit: 'w-feed-1.scope', verdict: 'first-sample', state: 'clear', explain: 'first' }),
    line(700, { msg: 'psi trigger fired', dir }),
    line(900, { event: 'verdict', unit: 'w-feed-1.scope', verdict: 'window', state: 'hot', explain: 'share 0.6' }),
    line(2500, { msg: 'psi trigger fired', dir }),
    line(1900, { event: 'verdict', unit: 'w-feed-1.scope', verdict: 'standing-still', state: 'standing-still', explain: 'share 0.7' }),
    line(2900, { event: 'verdict', unit: 'w-feed-1.scope', verdict: 'window', state: 'standing-still', explain: 'after' }),
    line(500, { event: 'verdict', unit: 'other.scope', verdict: 'window', state: 'hot', explain: 'not this wedge' }),
    'a line that is not JSON',
  ].join('\n');
  const [t, ...rest] = timelines(tsv, log, 'feed');
  assert.equal(rest.length, 0, 'only the variant asked for');
  assert.equal(t.wakeS, 0.4);
  assert.equal(t.stallS, 0.25, 'the stall onset of the row');
  assert.equal(t.wakeWhy, 'psi-trigger');
  assert.equal(t.verdictS, 1.9);
  assert.deepEqual(t.windows.map((w) => [w.atS, w.verdict]), [[0.4, 'first-sample'], [0.9, 'window'], [1.9, 'standing-still']], 'up to the verdict, this unit\'s only');
  assert.deepEqual(t.marks.map((m) => [m.atS, m.mark]), [[0.4, 'wake (psi-trigger)'], [0.7, 'trigger fired, awake']], 'wakes and trigger fires up to the verdict');
});

test('bench: the stall onset is the start of the run of 250 ms spans at or above the clear line that holds the verdict', () => {
  const { onGrid, stallOnset } = require('../../bench/stall-onset.js');
  // read every 100 ms: no stall for 2 s, a 0.05 share ramp for 1 s, a 0.5 share from 3 s on
  const samples = [];
  let full = 0;
  for (let t = 0; t <= 6000; t += 100) {
    samples.push({ atMs: 1000 + t, fullUs: full });
    full += t < 2000 ? 0 : t < 3000 ? 5_000 : 50_000;
  }
  const grid = onGrid(samples, 250);
  assert.equal(grid[0].t_ms, 1000);
  assert.equal(grid[1].t_ms, 1250);
  assert.equal(grid.length, 25);
  assert.equal(stallOnset(samples, 1000 + 4600), 1000 + 3000, 'the run began where the share rose above 0.1, not at the ramp below it');
  assert.equal(stallOnset(samples, 1000 + 1500), undefined, 'a verdict outside any stall has none');
  // uneven reads (a blocked loop): the counter is interpolated, the onset found the same
  const gappy = samples.filter((s, i) => i % 7 !== 3);
  assert.equal(stallOnset(gappy, 1000 + 4600), 1000 + 3000);
  assert.equal(stallOnset([], 5000), undefined);
  // the readings ended 0.4 s before the verdict, the stall still on: found (three wedges of ten)
  const cut = samples.filter((x) => x.atMs <= 1000 + 4200);
  assert.equal(stallOnset(cut, 1000 + 4600), 1000 + 3000, 'a stall on when the readings ended holds a verdict after them');
  assert.equal(stallOnset(samples.filter((x) => x.atMs <= 1000 + 1800), 1000 + 4600), undefined, 'readings that ended before any stall: none');
});

test("bench: a storm's report of a results directory: the table with sbd's CPU to the last verdict, then the shares; without readings, the table alone", () => {
  const { stormReport } = require('../../bench/storm-table.js');
  const um = 'user.slice/user-1000.slice/user@1000.service';
  const dir = fs.mkdtempSync(path.join(require('node:os').tmpdir(), 'sb-storm-report-'));
  try {
    const rows = [['single', 'single1-0.scope', '1000', '2000'], ['storm', 'storm-0.scope', '100000', '103000']];
    const sbd = { sbd_rss_kib: '65536', sbd_cpu_s_during_storm: '9.5', released_at_ms: '100000', sbd_cgroup: 'app.slice/sbd.service' };
    const alone = stormReport(dir, rows, sbd, 1);
    assert.equal(alone.split('\n').length, 4, 'no cgroup-cpu.txt: the table alone');
    assert.match(alone, /\| – \| 9\.5 s \|$/);
    const line = (t, sbdUs) => `t=${t} /proc/stat=100 0 100 ${t} ${um}/app.slice/cpu.stat=${2 * sbdUs} ${um}/app.slice/sbd.service/cpu.stat=${sbdUs}`; // the slice twice sbd: its own is read
    fs.writeFileSync(path.join(dir, 'cgroup-cpu.txt'), [line(100, 0), line(102, 1_000_000), line(104, 2_000_000)].join('\n'));
    const [table, blank, cpu] = stormReport(dir, rows, sbd, 1).split('\n').slice(3);
    assert.match(table, /\| 2\.0 s in 4\.0 s \| 9\.5 s \|$/, 'the release (100 s) to the last verdict (103 s): the readings that span it, at 100 and 104 s, 0.5 of a CPU');
    assert.equal(blank, '');
    assert.match(cpu, /^CPU from the release to the last verdict/);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

test("bench: the storm's CPU shares per cgroup from the guest's readings, between the release and the last verdict", () => {
  const { cpuShares, cpuLine, sbdCpu } = require('../../bench/storm-table.js');
  const um = 'user.slice/user-1000.slice/user@1000.service';
  const line = (t, stat, sbd, sessions, lab) => `t=${t} /proc/stat=${stat} 0 0 0 0 0 system.slice/lab-runner.service/cpu.stat=${lab} ${um}/sbd.service/cpu.stat=${sbd} ${um}/sessions.slice/cpu.stat=${sessions} ${um}/sessions.slice/a.scope/cpu.stat=1`;
  const text = [
    line(99, '10 0 10 180', 0, 0, 0),
    line(100, '100 0 50 50', 1_000_000, 2_000_000, 0), // the last at or before 100.5
    line(102, '300 0 150 50', 2_800_000, 3_000_000, 200_000), // 2 s: busy 300 of 300 ticks
    line(104, '500 0 250 150', 4_000_000, 4_000_000, 400_000), // the first at or after 103.5; 4 s in all
  ].join('\n');
  const s = cpuShares(text, 100.5, 103.5);
  assert.equal(s.fromS, 100);
  assert.equal(s.toS, 104);
  assert.ok(Math.abs(s.busyShare - 600 / 700) < 1e-12, 'busy: 600 of 700 ticks');
  assert.equal(s.cgroups[`${um}/sbd.service`], 75); // 3 s of CPU in 4 s
  assert.equal(s.cgroups[`${um}/sessions.slice`], 50);
  assert.equal(cpuLine(s, '0::/system.slice/lab-runner.service'), "CPU from the release to the last verdict (4.0 s, % of one CPU): sbd.service 75 %, sessions.slice 50 %; the bench's own processes, its onset watcher among them (system.slice/lab-runner.service) 10 %; the guest busy 86 % of all its CPUs");
  // sbd's own cgroup's CPU over the readings' span (3 s in 4 s); a kept run has only its slice's; neither: none
  assert.deepEqual(sbdCpu({ fromS: 100, toS: 104, cgroups: { [`${um}/app.slice/sbd.service`]: 75, [`${um}/app.slice`]: 80 } }), { cpuS: 3, overS: 4, cgroup: 'app.slice/sbd.service', own: true });
  assert.deepEqual(sbdCpu({ fromS: 100, toS: 104, cgroups: { [`${um}/app.slice`]: 50 } }), { cpuS: 2, overS: 4, cgroup: 'app.slice', own: false });
  // session 14's runs put sbd.service straight under the manager: its own, never app.slice's (which held none of it)
  assert.deepEqual(sbdCpu({ fromS: 100, toS: 104, cgroups: { [`${um}/sbd.service`]: 25, [`${um}/app.slice`]: 1 } }, 'sbd.service'), { cpuS: 1, overS: 4, cgroup: 'sbd.service', own: true });
  assert.equal(sbdCpu({ fromS: 100, toS: 104, cgroups: { [`${um}/app.slice`]: 1 } }, 'sbd.service'), undefined, 'sbd at the manager\'s root, not read: no slice to stand in');
  assert.equal(sbdCpu(s), undefined, 'no sbd.service under app.slice, no app.slice');
  assert.equal(cpuShares(text, 98, 103), undefined, 'no reading at or before the start');
  assert.equal(cpuShares(text, 100, 105), undefined, 'no reading at or after the end');
});

test("bench: sbd's timing readings (SBD_TIMING=1) as shares of each interval, from the release", () => {
  const { timingRows } = require('../../bench/sbd-timing-table.js');
  const reading = (atMs, upMs, cpuMs, onCpu, waiting, idle, sampleCalls) => ({ atMs, upMs, cpuMs, mainOnCpuMs: onCpu, mainRunnableWaitMs: waiting, loopIdleMs: idle, rows: { 'feed.sample': { calls: sampleCalls, cpuMs: sampleCalls * 5 } } });
  const rows = timingRows([reading(10_000, 0, 0, 0, 0, 0, 0), reading(12_000, 2000, 800, 600, 1200, 100, 10), reading(13_000, 2000, 900, 700, 1300, 100, 12)], 11_000);
  assert.equal(rows.length, 1, 'an interval of no time is left out');
  assert.equal(rows[0].atS, 1);
  assert.equal(rows[0].cpu, 40);
  assert.equal(rows[0].onCpu, 30);
  assert.equal(rows[0].waiting, 60);
  assert.equal(rows[0].loopIdle, 5);
  assert.deepEqual(rows[0].calls['feed.sample'], { calls: 10, cpuMs: 50 });
  assert.deepEqual(rows[0].calls['incident.tell'], { calls: 0, cpuMs: 0 });
});

test('bench: a guest bench TSV as a markdown table, header, rule and rows', () => {
  const { tsvAsMarkdown } = require('../../bench/lib.js');
  assert.deepEqual(tsvAsMarkdown('file\tus\nmemory.stat\t12.5\ncpu.pressure\t3.0\n'), ['| file | us |', '| --- | --- |', '| memory.stat | 12.5 |', '| cpu.pressure | 3.0 |']);
  assert.deepEqual(tsvAsMarkdown('a\tb\n'), ['| a | b |', '| --- | --- |'], 'a header alone: no rows');
});

test("bench: sbd's CPU per call of each part, from the release's reading to the last before the peak's end", () => {
  const { perCallFrom } = require('../../bench/sbd-timing-table.js');
  const reading = (atMs, tellCalls, tellMs) => ({ atMs, rows: { 'incident.tell': { calls: tellCalls, cpuMs: tellMs } } });
  const readings = [reading(9_000, 1, 5), reading(10_000, 2, 8), reading(12_000, 12, 38), reading(14_000, 22, 48), reading(20_000, 40, 100)];
  const per = perCallFrom(readings, 10_500, 4, ['incident.tell', 'feed.read']);
  assert.equal(per?.toS, 3.5, 'from the reading at 10.0 s to the one at 14.0 s, 3.5 s after the release');
  assert.deepEqual(per?.rows['incident.tell'], { calls: 20, perCallMs: 2 });
  assert.deepEqual(per?.rows['feed.read'], { calls: 0, perCallMs: undefined });
  assert.equal(perCallFrom(readings, 8_000, 4), undefined, 'no reading at or before the release');
  assert.equal(perCallFrom(readings, 10_500, 0.1), undefined, 'no reading after the release within the span');
});

test("bench: the storm's slowest sessions' wakes and windows from their stall's onset (SBD_TIMING=1)", () => {
  const { slowestTimelines } = require('../../bench/storm-windows.js');
  const rows = [
    ['single', 'single1-0.scope', '900', '2500', '1000'],
    ['storm', 'storm-0.scope', '10000', '12000', '10500'],
    ['storm', 'storm-1.scope', '10000', '14500', '10000'],
    ['storm', 'storm-2.scope', '10000', '', ''],
  ];
  const windows = [
    { t: 10_200, u: 'storm-1.scope', wake: 'psi-trigger' },
    { t: 10_200, u: 'storm-1.scope', ev: 'first-sample', hot: 0 },
    { t: 10_800, u: 'storm-1.scope', timerMs: 500, late: 0, ev: 'window', kind: 'clear', ms: 600, share: 0.4, anon: 0.8, why: 'anon share 0.80 below 0.9: page cache', hot: 0 },
    { t: 11_400, u: 'storm-1.scope', timerMs: 500, late: 1, ev: 'window', kind: 'hot', ms: 1200, share: 0.5, hot: 1 },
    { t: 14_500, u: 'storm-1.scope', timerMs: 2000, late: 0, ev: 'standing-still', kind: 'hot', ms: 2100, share: 0.6, hot: 2 },
    { t: 20_000, u: 'storm-1.scope', ev: 'window', kind: 'hot', hot: 2 },
    { t: 11_000, u: 'storm-0.scope', ev: 'first-sample', hot: 0 },
  ];
  const lines = slowestTimelines(rows, windows, 1);
  assert.equal(lines.length, 1, 'only the n slowest, singles and sessions without a verdict left out');
  assert.equal(lines[0], 'storm-1.scope: lag 4.5 s, brake at 0.0: 0.2 wake (psi-trigger); 0.2 first-sample; 0.8 0.6 s clear 0.40 anon 0.80 (anon share 0.80 below 0.9: page cache) [0.5 s timer, late 0]; 1.4 1.2 s hot 0.50 [0.5 s timer, late 1]; 4.5 2.1 s hot 0.60 [2 s timer, late 0] VERDICT');
  // a window warm only for its wait for a CPU (since session 28: cpu share and starved recorded)
  const starved = slowestTimelines(rows, [{ t: 11_000, u: 'storm-1.scope', timerMs: 500, late: 0, ev: 'window', kind: 'warm', ms: 500, share: 0, anon: 1, cpu: 0.87, starved: true, hot: 1 }], 1);
  assert.equal(starved[0], 'storm-1.scope: lag 4.5 s, brake at 0.0: 1.0 0.5 s warm 0.00 anon 1.00 cpu 0.87 starved [0.5 s timer, late 0]');
  // under the fuse, the rest of the charge (since session 35: pc recorded): page cache, and the other
  const fuse = slowestTimelines(rows, [{ t: 11_000, u: 'storm-1.scope', timerMs: 500, late: 0, ev: 'window', kind: 'clear', ms: 500, share: 0.66, anon: 0.886, pc: 0.004, hot: 0 }, { t: 11_500, u: 'storm-1.scope', ev: 'window', kind: 'hot', share: 0.9, anon: 1, pc: 0, hot: 1 }], 1);
  assert.equal(fuse[0], 'storm-1.scope: lag 4.5 s, brake at 0.0: 1.0 0.5 s clear 0.66 anon 0.89 (page cache 0.00, other 0.11) [0.5 s timer, late 0]; 1.5 hot 0.90 anon 1.00');
});

test("bench: the storm's worst with each onset moved past the windows sbd judged page cache (the anon fuse open)", () => {
  const { fuseAwareWorst, fuseAwareLine } = require('../../bench/storm-windows.js');
  const rows = [
    ['single', 'single1-0.scope', '900', '2500', '1000'], ['single', 'single2-0.scope', '900', '2600', '1000'], ['single', 'single3-0.scope', '900', '2700', '1000'],
    ['storm', 'storm-0.scope', '10000', '13000', '10000'],
    ['storm', 'storm-1.scope', '10000', '18000', '10000'],
  ];
  const windows = [
    // storm-1: stalled from 10,000 ms, anon under the fuse until the window ending at 16,000 ms
    { t: 12_000, u: 'storm-1.scope', share: 0.8, anon: 0.89 },
    { t: 16_000, u: 'storm-1.scope', share: 0.8, anon: 0.89 },
    { t: 16_500, u: 'storm-1.scope', share: 0.8, anon: 1 },
    { t: 17_000, u: 'storm-1.scope', share: 0.05, anon: 0.5 }, // clear anyway: not page cache's doing
    // single3: one page-cache window, its lag from 1.7 s to 1.2 s
    { t: 1_500, u: 'single3-0.scope', share: 0.5, anon: 0.5 },
    // storm-0: hot from the start; a window before its stall's onset moves nothing
    { t: 9_500, u: 'storm-0.scope', share: 0.8, anon: 0.5 },
    { t: 11_000, u: 'storm-0.scope', share: 0.8, anon: 1 },
  ];
  const r = fuseAwareWorst(rows, windows);
  assert.equal(r.singleRaw, 1.6, "the singles' median from their stalls' onsets (the lower middle)");
  assert.equal(r.single, 1.5, 'and with their onsets moved past their own page-cache windows');
  assert.equal(r.worstRaw.unit, 'storm-1.scope');
  assert.equal(r.worstRaw.raw, 8);
  assert.deepEqual(r.moved, ['storm-1.scope']);
  assert.equal(r.worst.unit, 'storm-0.scope', 'storm-1 judged 2 s after its anon share passed the fuse; storm-0 3 s after its onset');
  assert.equal(r.worst.lag, 3);
  assert.equal(fuseAwareLine(r), "from the stall's onset: worst 8.0 s (storm-1.scope, 5.00× the singles' median 1.6 s); with each onset moved past the windows sbd judged page cache (anon fuse open; 1 session: storm-1.scope): worst 3.0 s (storm-0.scope, 2.00× the singles' median so measured, 1.5 s)");
  assert.equal(fuseAwareWorst(rows, windows.map(({ anon, ...w }) => w)).worst.lag, 8, 'windows without an anon share move nothing');
  // paused: storm-1's clear window at 17,000 ms (share 0.05) moves its onset there too
  const p = fuseAwareWorst(rows, windows, { paused: true });
  assert.equal(p.worst.unit, 'storm-0.scope');
  assert.deepEqual(p.moved, ['storm-1.scope']);
  const storm1 = fuseAwareWorst(rows.filter((x) => x[1] !== 'storm-0.scope'), windows, { paused: true });
  assert.equal(storm1.worst.lag, 1, 'judged 1 s after the window in which its stall paused');
  assert.equal(fuseAwareWorst(rows.filter((x) => x[1] !== 'storm-0.scope'), windows).worst.lag, 2, 'without paused: 2 s after the fuse');
  assert.match(fuseAwareLine(p, true), /with each onset moved past the windows sbd judged page cache or measured clear \(the stall paused\) \(1 session: storm-1\.scope\): worst 3\.0 s \(storm-0\.scope, 2\.00× the singles' median so measured, 1\.5 s\)$/);
});

test('storm-windows samplesByPhase: per 2 s, the feeds not judged yet and their samples, against the judged ones and how many were stretched', () => {
  const { samplesByPhase, samplesByPhaseLines } = require('../../bench/storm-windows.js');
  const w = (t, u, timerMs, ev = 'window') => ({ t, u, timerMs, ev, kind: 'hot' });
  const windows = [
    { t: 900, u: 'storm-1.scope', wake: 'own brake fired' }, // a wake is no sample
    w(1000, 'storm-1.scope', 0, 'first-sample'),
    w(1500, 'storm-1.scope', 500),
    w(2000, 'storm-1.scope', 500, 'standing-still'),
    w(1200, 'storm-2.scope', 500),
    w(1300, 'single1-0.scope', 500), // not the storm's
    w(4000, 'storm-1.scope', 2000),
    w(4100, 'storm-2.scope', 8000),
    w(5000, 'storm-3.scope', 500),
  ];
  const bins = samplesByPhase(windows);
  assert.deepEqual(bins, [
    { fromS: 0, onsetFeeds: 2, onsetPerS: 2, judgedPerS: 0, stretchedPerS: 0 },
    { fromS: 2, onsetFeeds: 0, onsetPerS: 0, judgedPerS: 1, stretchedPerS: 1 },
    { fromS: 4, onsetFeeds: 1, onsetPerS: 1, judgedPerS: 0, stretchedPerS: 0 },
  ]);
  assert.equal(samplesByPhaseLines(bins).length, 3);
  assert.match(samplesByPhaseLines(bins)[1], /^ {3}2 s: 0 feeds not judged yet, 0 samples\/s; judged 1 samples\/s \(1 on stretched windows\)$/);
  assert.deepEqual(samplesByPhase([{ t: 1, u: 'single1-0.scope', timerMs: 500, ev: 'window' }]), [], 'no storm record: nothing');
});

test('bench: storm-late-rule moves a verdict to the second hot window of a run holding the stall, and no sooner', () => {
  const { lateRuleVerdictAt } = require('../../bench/storm-late-rule.js');
  const w = (t, kind, share, ms, ev = 'window') => ({ t, u: 'a', ev, kind, share, ms });
  const wake = { t: 0, u: 'a', wake: 'own brake fired' };
  const first = { t: 1, u: 'a', ev: 'first-sample' };
  assert.equal(lateRuleVerdictAt([wake, first, w(1100, 'hot', 0.75, 1100), w(1700, 'hot', 0.85, 600), w(2700, 'hot', 0.8, 1000, 'standing-still')], 1200), 1700, '0.83 + 0.51 = 1.34 s of stall on the second');
  assert.equal(lateRuleVerdictAt([wake, first, w(1100, 'hot', 0.5, 1100), w(1700, 'hot', 0.5, 600), w(2700, 'hot', 0.8, 1000, 'standing-still')], 1200), 2700, '0.85 s: the verdict stays');
  assert.equal(lateRuleVerdictAt([wake, first, w(1100, 'hot', 1, 1100), w(1700, 'clear', 0, 600), w(2300, 'hot', 0.9, 600), w(2900, 'hot', 0.9, 600, 'standing-still')], 1200), 2900, 'a clear window ends the run: 1.1 s before it do not count');
  assert.equal(lateRuleVerdictAt([wake, first, w(1100, 'hot', 1, 1100), w(1700, 'warm', 0.15, 600), w(2300, 'hot', 0.9, 600, 'standing-still')], 1200), 2300, 'warm windows neither add nor end');
  assert.equal(lateRuleVerdictAt([wake, first, w(1100, 'hot', 1, 1100)], 1200), undefined, 'no verdict: nothing to move');
  assert.equal(lateRuleVerdictAt([wake, first, w(1100, 'hot', 1, 1100), { t: 1500, u: 'a', wake: 'psi-trigger' }, { t: 1501, u: 'a', ev: 'first-sample' }, w(2100, 'hot', 1, 600), w(2700, 'hot', 1, 600, 'standing-still')], 1200), 2700, 'a new wake starts a new run');
});

test("bench: storm-windows breachToWake: each storm session's first wake at or after its brake's breach, median, p90 and worst", () => {
  const { breachToWake, breachToWakeLine } = require('../../bench/storm-windows.js');
  const rows = [
    ['single', 'single1-0.scope', '900', '2500'],
    ...Array.from({ length: 10 }, (_, i) => ['storm', `storm-${i}.scope`, '10000', '14000']),
    ['storm', 'storm-10.scope', '', ''], // no breach seen
    ['storm', 'storm-11.scope', '10000', '14000'], // awake at its breach: left out
  ];
  const windows = [
    { t: 950, u: 'single1-0.scope', wake: 'own brake fired' },
    { t: 6_000, u: 'storm-0.scope', wake: 'psi-trigger' }, // long before the breach: asleep again, not its wake
    { t: 9_500, u: 'storm-10.scope', wake: 'psi-trigger' },
    ...Array.from({ length: 10 }, (_, i) => ({ t: 10_000 + i * 100, u: `storm-${i}.scope`, wake: 'own brake fired' })),
    { t: 12_000, u: 'storm-9.scope', wake: 'own brake fired' }, // a later wake: the first counts
    { t: 10_050, u: 'storm-9.scope', ev: 'window' },
    { t: 7_000, u: 'storm-0.scope', ev: 'window' },
    { t: 9_600, u: 'storm-11.scope', ev: 'window' },
    { t: 10_600, u: 'storm-11.scope', wake: 'own brake fired' },
  ];
  const r = breachToWake(rows, windows);
  assert.deepEqual(r, { n: 10, awake: 1, p50: 0.5, p90: 0.9, max: 0.9, worstUnit: 'storm-9.scope' });
  assert.equal(breachToWakeLine(r), 'breach → wake (10 sessions asleep at their breach, 1 awake left out): median 0.50 s, p90 0.90 s, worst 0.90 s (storm-9.scope)');
  assert.equal(breachToWake(rows.slice(0, 1), windows), undefined, 'no storm session');
  assert.match(breachToWakeLine(undefined), /no storm session woken/);
});

test("bench: storm-windows onsetWindowLengths: the storm sessions' onset windows' lengths, median, p90 and longest", () => {
  const { onsetWindowLengths, onsetWindowLine } = require('../../bench/storm-windows.js');
  const windows = [
    ...Array.from({ length: 10 }, (_, i) => ({ t: i, u: `storm-${i}.scope`, timerMs: 500, ev: 'window', kind: 'hot', ms: 500 + i * 100 })),
    { t: 20, u: 'storm-1.scope', timerMs: 2000, ev: 'window', kind: 'hot', ms: 9000 }, // a steady window: not counted
    { t: 21, u: 'single1-0.scope', timerMs: 500, ev: 'window', kind: 'hot', ms: 9000 }, // not the storm's
    { t: 22, u: 'storm-2.scope', wake: 'psi-trigger' },
    { t: 23, u: 'storm-2.scope', ev: 'first-sample', timerMs: 0 },
  ];
  const r = onsetWindowLengths(windows);
  assert.deepEqual(r, { n: 10, p50: 1.0, p90: 1.4, max: 1.4 });
  assert.equal(onsetWindowLine(r), 'onset windows (10, due 0.5 s): median 1.00 s, p90 1.40 s, longest 1.40 s');
  assert.equal(onsetWindowLengths([]), undefined);
  assert.equal(onsetWindowLine(undefined), 'onset windows: none');
});
