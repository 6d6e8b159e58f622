// @ts-check
'use strict';
const test = require('node:test');
const assert = require('node:assert/strict');
const fc = require('fast-check');
const { parseStat, parseStatusUid, parseCmdline, environValue } = require('../../../dist/proc/stat.js');
const { readProcess, rootProcess, readCgroupSizes } = require('../../../dist/proc/table.js');

// A real line of /proc/<pid>/stat (python3 under a 64M brake), 52 fields.
const REAL = '412 (python3) S 398 412 398 0 -1 4194560 17231 0 0 0 41 22 0 0 20 0 1 0 1834 79183872 16801 18446744073709551615 1 1 0 0 0 0 0 16781312 2 0 0 0 17 1 0 0 0 0 0 0 0 0 0 0 0 0 0';

test('stat: the fields after the last ")"', () => {
  assert.deepEqual(parseStat(REAL, '/proc/412/stat'), {
    pid: 412, comm: 'python3', state: 'S', ppid: 398, session: 398, cpuTicks: 63, startTicks: 1834, rssPages: 16801,
  });
});

test('stat: a comm with spaces and parentheses does not shift the fields', () => {
  const line = REAL.replace('(python3)', '(a) (b c) d)');
  const s = parseStat(line, 'f');
  assert.equal(s.comm, 'a) (b c) d');
  assert.equal(s.ppid, 398);
  assert.equal(s.rssPages, 16801);
});

test('stat: any comm of up to 15 characters round-trips and keeps ppid', () => {
  fc.assert(fc.property(fc.string({ maxLength: 15 }).filter((c) => !c.includes('\n')), fc.integer({ min: 1, max: 4194304 }), (comm, ppid) => {
    const s = parseStat(REAL.replace('(python3)', () => `(${comm})`).replace(' S 398 ', () => ` S ${ppid} `), 'f');
    return s.comm === comm && s.ppid === ppid;
  }));
});

test('stat and status: unexpected content is an error naming the file', () => {
  assert.throws(() => parseStat('garbage', '/proc/9/stat'), /\/proc\/9\/stat: unexpected content: no "\(comm\)" field/);
  assert.throws(() => parseStat('9 (x) S', '/proc/9/stat'), /field 4 is undefined/);
  assert.equal(parseStatusUid('Name:\tx\nUid:\t1000\t1000\t1000\t1000\n', 'f'), 1000);
  assert.throws(() => parseStatusUid('Name:\tx\n', '/proc/9/status'), /no Uid line/);
});

test('cmdline and environ', () => {
  assert.deepEqual(parseCmdline(Buffer.from('node\0server.js\0--token\0s3cret\0')), ['node', 'server.js', '--token', 's3cret']);
  assert.deepEqual(parseCmdline(Buffer.alloc(0)), []);
  const env = Buffer.from('PATH=/bin\0SESSIONBRAKE_SESSION=build-1\0X=SESSIONBRAKE_SESSION=no\0');
  assert.equal(environValue(env, 'SESSIONBRAKE_SESSION'), 'build-1');
  assert.equal(environValue(env, 'HOME'), undefined);
  assert.equal(environValue(Buffer.from('A=1'), 'A'), '1');
});

test('readProcess reads this very process, and undefined for one that exited', () => {
  const me = readProcess(process.pid);
  assert.ok(me);
  assert.equal(me.pid, process.pid);
  assert.equal(me.ppid, process.ppid);
  assert.equal(me.uid, process.getuid?.());
  assert.ok(me.rssBytes > 1 << 20);
  const { spawnSync } = require('node:child_process');
  assert.equal(readProcess(/** @type {number} */ (spawnSync('true').pid)), undefined);
});

test('readCgroupSizes: each process of the cgroup with its comm and RSS from stat alone, the same as readProcess; one that exited is left out; [] for a gone cgroup', () => {
  const fs = require('node:fs');
  const os = require('node:os');
  const path = require('node:path');
  const { spawnSync } = require('node:child_process');
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sb-cg-'));
  const exited = /** @type {number} */ (spawnSync('true').pid);
  fs.writeFileSync(path.join(dir, 'cgroup.procs'), `${process.pid}\n${exited}\n`);
  const sizes = readCgroupSizes(dir);
  const me = readProcess(process.pid);
  assert.equal(sizes.length, 1);
  assert.deepEqual([sizes[0].pid, sizes[0].comm], [process.pid, me?.comm]);
  assert.ok(Math.abs(sizes[0].rssBytes - (me?.rssBytes ?? 0)) < 16 << 20, 'the same RSS as readProcess, give or take what this test allocated');
  assert.deepEqual(Object.keys(sizes[0]).sort(), ['comm', 'pid', 'rssBytes'], 'no argv, no uid: status never shows them');
  assert.deepEqual(readCgroupSizes(path.join(dir, 'gone')), []);
});

test('rootProcess: the oldest process whose parent is outside the set', () => {
  const p = (pid, ppid, startTicks) => ({ pid, ppid, startTicks, comm: 'x', uid: 1000, rssBytes: 0, cpuTicks: 0, argv: [] });
  assert.equal(rootProcess([p(20, 10, 5), p(21, 20, 6), p(30, 1, 9)])?.pid, 20);
  assert.equal(rootProcess([p(30, 1, 9), p(20, 10, 5)])?.pid, 20);
  assert.equal(rootProcess([]), undefined);
});
