// @ts-check
'use strict';
const test = require('node:test');
const assert = require('node:assert/strict');
const {
  CgroupFormatError, parseFlatKeyed, parseRequiredKeys, pickKeys, parseLimit, parseSingle, parsePressure, parsePids, parseProcCgroup,
} = require('../../../dist/cgroup/parse.js');

test('flat keyed files: every key, unknown ones kept', () => {
  const events = parseFlatKeyed('low 0\nhigh 192\nmax 0\noom 0\noom_kill 0\noom_group_kill 0\n', 'memory.events');
  assert.deepEqual(events, { low: 0, high: 192, max: 0, oom: 0, oom_kill: 0, oom_group_kill: 0 });
  assert.deepEqual(parseFlatKeyed('populated 1\nfrozen 0\nnew_key 7\n', 'cgroup.events'), { populated: 1, frozen: 0, new_key: 7 });
  assert.deepEqual(parseFlatKeyed('', 'cpu.stat'), {});
});

test('flat keyed files: bad lines and missing keys are errors naming the file and the line', () => {
  assert.throws(() => parseFlatKeyed('high 12 13\n', '/x/memory.events'), {
    name: 'CgroupFormatError',
    message: '/x/memory.events: unexpected content: line "high 12 13" is not "key value"',
  });
  assert.throws(() => parseFlatKeyed('high -1\n', 'memory.events'), /high is "-1", expected a whole number/);
  assert.throws(() => parseRequiredKeys('low 0\n', 'memory.events.local', ['high']), {
    message: 'memory.events.local: unexpected content: no "high" line',
  });
  assert.ok(new CgroupFormatError('f', 'd') instanceof Error);
});

test('limits: bytes, or max as Infinity', () => {
  assert.equal(parseLimit('67108864\n', 'memory.high'), 67108864);
  assert.equal(parseLimit('max\n', 'memory.max'), Infinity);
  assert.throws(() => parseLimit('64M\n', 'memory.high'), /memory.high: unexpected content: limit is "64M"/);
  assert.equal(parseSingle('69033984\n', 'memory.current'), 69033984);
});

test('pressure: some and full lines with their totals in µs', () => {
  const p = parsePressure('some avg10=41.55 avg60=12.02 avg300=2.76 total=7251847\nfull avg10=41.55 avg60=11.98 avg300=2.75 total=7300751\n', 'memory.pressure');
  assert.deepEqual(p.some, { avg10: 41.55, avg60: 12.02, avg300: 2.76, totalUs: 7251847 });
  assert.equal(p.full?.totalUs, 7300751);
  assert.equal(parsePressure('some avg10=0.00 avg60=0.00 avg300=0.00 total=0\n', 'cpu.pressure').full, undefined);
  assert.throws(() => parsePressure('full avg10=0.00 avg60=0.00 avg300=0.00 total=0\n', 'p'), /no "some" line/);
  assert.throws(() => parsePressure('some avg10=x\n', 'p'), /line "some avg10=x" is not a PSI line/);
});

test('pids and /proc/<pid>/cgroup', () => {
  assert.deepEqual(parsePids('412\n415\n', 'cgroup.procs'), [412, 415]);
  assert.deepEqual(parsePids('', 'cgroup.procs'), []);
  assert.equal(parseProcCgroup('0::/user.slice/user-1000.slice/user@1000.service/sessions.slice/a.scope\n', '/proc/1/cgroup'),
    '/user.slice/user-1000.slice/user@1000.service/sessions.slice/a.scope');
  assert.equal(parseProcCgroup('4:memory:/x\n', '/proc/1/cgroup'), undefined);
  assert.throws(() => parseProcCgroup('', '/proc/1/cgroup'), /empty/);
});

test('pickKeys: only the keys asked, each at a line start (file is not file_mapped), checked', () => {
  const stat = 'anon 100\nfile_mapped 7\nfile 200\nanon_thp 9\nshmem 3\n';
  assert.deepEqual(pickKeys(stat, 'memory.stat', ['anon', 'shmem', 'file']), { anon: 100, shmem: 3, file: 200 });
  assert.deepEqual(pickKeys('low 0\nhigh 5', 'memory.events.local', ['high']), { high: 5 }, 'the last line without its newline');
  assert.throws(() => pickKeys('file_mapped 7\n', 'memory.stat', ['file']), { name: 'CgroupFormatError', message: 'memory.stat: unexpected content: no "file" line' });
  assert.throws(() => pickKeys('anon x\n', 'memory.stat', ['anon']), { name: 'CgroupFormatError' });
  assert.throws(() => pickKeys('anon -1\n', 'memory.stat', ['anon']), { name: 'CgroupFormatError' });
});
