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
