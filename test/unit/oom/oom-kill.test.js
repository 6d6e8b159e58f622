// @ts-check
'use strict';
// Issue 11: any kernel OOM kill in a session is an incident naming the process (when the kernel
// log can be read) and the figures. A fake cgroup directory and recorded /dev/kmsg lines.
const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { killsIn, parseKmsgRecord, newKills, describeKills } = require('../../../dist/oom/kills.js');
const { OomKillWatch, readKmsg, readFigures } = require('../../../dist/oom/watch.js');

const MiB = 2 ** 20;
const CG = '/user.slice/user-1000.slice/user@1000.service/sessions.slice/oom1.scope';
const OTHER = '/user.slice/user-1000.slice/user@1000.service/sessions.slice/other.scope';
// As kernel 6.1 writes them (mm/oom_kill.c), one /dev/kmsg record each.
const KMSG = [
  '6,1001,5000000,-;stress-ng invoked oom-killer: gfp_mask=0xcc0(GFP_KERNEL), order=0, oom_score_adj=0',
  `6,1040,5000100,-;oom-kill:constraint=CONSTRAINT_MEMCG,nodemask=(null),cpuset=/,mems_allowed=0,oom_memcg=${OTHER},task_memcg=${OTHER},task=python3,pid=700,uid=1000`,
  '3,1041,5000101,-;Memory cgroup out of memory: Killed process 700 (python3) total-vm:300000kB, anon-rss:200000kB, file-rss:4kB, shmem-rss:0kB, UID:1000 pgtables:500kB oom_score_adj:0',
  `6,1090,9000100,-;oom-kill:constraint=CONSTRAINT_MEMCG,nodemask=(null),cpuset=/,mems_allowed=0,oom_memcg=${CG},task_memcg=${CG},task=my (odd), comm,pid=812,uid=1000\n SUBSYSTEM=memory`,
  '3,1091,9000101,-;Memory cgroup out of memory: Killed process 812 (my (odd), comm) total-vm:900000kB, anon-rss:786432kB, file-rss:0kB, shmem-rss:0kB, UID:1000 pgtables:1600kB oom_score_adj:0',
];

test('kmsg records: timestamp and text; the kills of one cgroup, named by comm and pid, with anon-rss', () => {
  assert.deepEqual(parseKmsgRecord('6,1,42,-;hello\n KEY=v'), { atUs: 42, text: 'hello' });
  assert.equal(parseKmsgRecord('garbage'), undefined);
  assert.deepEqual(killsIn(KMSG, CG), [{ oomMemcg: CG, taskMemcg: CG, comm: 'my (odd), comm', pid: 812, atUs: 9000100, anonRssBytes: 768 * MiB }]);
  assert.equal(killsIn(KMSG, OTHER)[0]?.pid, 700);
  assert.deepEqual(killsIn(KMSG, '/nowhere.scope'), []);
});

test('the counter: moves forward, or starts again from zero for a new cgroup', () => {
  assert.equal(newKills(0, 1), 1);
  assert.equal(newKills(2, 2), 0);
  assert.equal(newKills(5, 1), 1, 'a lower count is a new cgroup behind the same name');
});

/** A fake cgroup directory of a scope at its MemoryMax. */
function fakeCgroup(oomKills) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sb-oom-'));
  const w = (f, t) => fs.writeFileSync(path.join(dir, f), t);
  w('memory.current', `${760 * MiB}\n`);
  w('memory.high', `${640 * MiB}\n`);
  w('memory.max', `${768 * MiB}\n`);
  w('memory.peak', `${768 * MiB}\n`);
  const events = (n) => `low 0\nhigh 4000\nmax 120\noom ${n}\noom_kill ${n}\noom_group_kill 0\n`;
  w('memory.events', events(oomKills));
  w('memory.events.local', events(oomKills));
  return { dir, kill: (n) => { w('memory.events', events(n)); w('memory.events.local', events(n)); } };
}

function setup(readKmsgFn) {
  const cg = fakeCgroup(0);
  const told = [];
  const watch = new OomKillWatch({ tell: (i) => told.push(i), observeOnly: false, readKmsg: readKmsgFn, now: () => 1234 });
  const s = { unit: 'oom1.scope', id: 'oom1', controlGroup: CG, cgroupDir: cg.dir };
  watch.watch(s);
  return { cg, told, watch, s };
}

test('an oom_kill that moves is one incident naming the process and the figures', () => {
  const t = setup(() => ({ records: KMSG }));
  t.watch.check(t.s); // memory.events.local changed for a high bump: no kill, nothing told
  assert.deepEqual(t.told, []);
  t.cg.kill(1);
  t.watch.check(t.s);
  assert.equal(t.told.length, 1);
  const i = t.told[0];
  assert.equal(i.type, 'oom-kill');
  assert.equal(i.session, 'oom1');
  assert.equal(i.count, 1);
  assert.deepEqual(i.kills.map((k) => [k.pid, k.comm]), [[812, 'my (odd), comm']]);
  assert.equal(i.maxBytes, 768 * MiB);
  assert.equal(i.peakBytes, 768 * MiB);
  assert.equal(i.events.oom_kill, 1);
  assert.equal(i.message, "kernel OOM kill at the session's MemoryMax: my (odd), comm (pid 812, 768.0M anon); memory.current 760.0M, high 640.0M, max 768.0M, peak 768.0M, oom_kill 1");
  t.watch.check(t.s);
  assert.equal(t.told.length, 1, 'told once per kill');
});

test('without the kernel log, the incident says how many and where to look', () => {
  const t = setup(() => ({ problem: '/dev/kmsg: EPERM (kernel.dmesg_restrict=1)' }));
  t.cg.kill(2);
  t.watch.check(t.s);
  assert.equal(t.told.length, 1);
  assert.equal(t.told[0].count, 2);
  assert.deepEqual(t.told[0].kills, []);
  assert.equal(t.told[0].kernelLog, '/dev/kmsg: EPERM (kernel.dmesg_restrict=1)');
  assert.match(t.told[0].message, /^kernel OOM kill: 2 processes; which: the kernel log names it: as root, journalctl -k -g 'Killed process' \(or dmesg\) \(sbd cannot read it: \/dev\/kmsg: EPERM/);
});

test('kills before sbd adopted the session are not news; a gone cgroup is no error', () => {
  const cg = fakeCgroup(3);
  const told = [];
  const watch = new OomKillWatch({ tell: (i) => told.push(i), observeOnly: false, readKmsg: () => ({ records: [] }) });
  const s = { unit: 'old.scope', id: 'old', controlGroup: CG, cgroupDir: cg.dir };
  watch.watch(s);
  watch.check(s);
  assert.deepEqual(told, []);
  fs.rmSync(cg.dir, { recursive: true });
  watch.check(s);
  assert.deepEqual(told, []);
  assert.deepEqual(readFigures(cg.dir), {});
});

test('describeKills: the machine\'s own OOM, and a slice\'s limit', () => {
  const f = { currentBytes: MiB, highBytes: Infinity, maxBytes: Infinity, events: { oom_kill: 1 } };
  assert.match(describeKills(1, [{ pid: 5, comm: 'cc1plus', oomMemcg: '/', taskMemcg: CG, atUs: 1 }], f, undefined), /^kernel OOM kill by the machine running out of memory: cc1plus \(pid 5\); .*max infinity, peak \?/);
  assert.match(describeKills(1, [{ pid: 5, comm: 'cc1plus', oomMemcg: '/x.slice', taskMemcg: CG, atUs: 1 }], f, undefined), /^kernel OOM kill at the limit of \/x\.slice:/);
});

test('describeKills: a cgroup gone before its figures were read says so', () => {
  assert.equal(describeKills(1, [], {}, undefined), `kernel OOM kill: one process; which: the kernel log names it: as root, journalctl -k -g 'Killed process' (or dmesg); the cgroup was gone before sbd could read its figures`);
});

test('readKmsg: records of a file; a file it may not open is a problem, not a throw', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sb-kmsg-'));
  const file = path.join(dir, 'kmsg');
  fs.writeFileSync(file, `${KMSG.join('\n')}\n`);
  const r = readKmsg(file);
  assert.ok('records' in r);
  assert.equal(killsIn(r.records, CG)[0]?.pid, 812);
  assert.deepEqual(readKmsg(path.join(dir, 'missing')), { problem: `${path.join(dir, 'missing')}: ENOENT` });
});

test('the counter is read through a held fd where the awake feed has one, by path otherwise; a held read of a gone cgroup is no error', () => {
  const cg = fakeCgroup(0);
  const told = [];
  const reads = [];
  /** @type {string | undefined | Error} */
  let held;
  const watch = new OomKillWatch({
    tell: (i) => told.push(i), observeOnly: false, readKmsg: () => ({ records: [] }),
    heldEventsLocal: (s) => { reads.push(s.unit); if (held instanceof Error) throw held; return held; },
  });
  const s = { unit: 'held.scope', id: 'held', controlGroup: CG, cgroupDir: cg.dir };
  watch.watch(s); // no fd held: read by path (0 kills)
  held = 'low 0\nhigh 9\nmax 0\noom 1\noom_kill 1\noom_group_kill 0\n'; // the feed's fd sees a kill the path does not (yet)
  watch.check(s);
  assert.equal(told.length, 1, 'the held text was the one read');
  assert.equal(told[0].count, 1);
  held = undefined; // the feed slept and closed its files: by path (1 kill there once written)
  cg.kill(1);
  watch.check(s);
  assert.equal(told.length, 1, 'by path: the same count, nothing new');
  held = new (require('../../../dist/cgroup/read.js').CgroupGoneError)(cg.dir);
  cg.kill(5);
  watch.check(s);
  assert.equal(told.length, 1, 'gone through the held fd: nothing told, no throw');
  held = Object.assign(new Error('read: EIO'), { code: 'EIO' }); // another failure of the held fd: read by path
  watch.check(s);
  assert.equal(told.length, 2, 'read by path: the kills there told');
  assert.equal(told[1].count, 4);
  assert.deepEqual(reads, ['held.scope', 'held.scope', 'held.scope', 'held.scope', 'held.scope']);
});

test("an awake feed's sample hands its oom_kill on: told when it moved, nothing for a session not watched yet, no read of its own", () => {
  const cg = fakeCgroup(2);
  const told = [];
  const watch = new OomKillWatch({ tell: (i) => told.push(i), observeOnly: false, readKmsg: () => ({ records: [] }) });
  const s = { unit: 'fed.scope', id: 'fed', controlGroup: CG, cgroupDir: cg.dir };
  watch.sampled(s, 5); // a restored deadline's first sample, before the session is watched
  assert.deepEqual(told, [], 'its count at adoption is not news');
  watch.watch(s); // reads 2 from the file
  // The file says 2; the sample says 3: the sample's count is taken, not the file read again.
  watch.sampled(s, 3);
  assert.equal(told.length, 1);
  assert.equal(told[0].count, 1);
  watch.sampled(s, 3);
  assert.equal(told.length, 1, 'told once per kill');
});
