// @ts-check
'use strict';
// When a session's oom_kill counter is read (src/oom/reads.ts): owed to an awake feed's next
// sample, otherwise read throttled; a session that ends with a read owed or waiting has it then,
// so a kill that ended the session is told. A fake counter for the schedule, and a real
// OomKillWatch over a fake cgroup directory for the kill told at removal.
const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { OomReads } = require('../../../dist/oom/reads.js');
const { OomKillWatch } = require('../../../dist/oom/watch.js');

const S = { unit: 'a.scope', id: 'a', controlGroup: '/x/a.scope', cgroupDir: '/nonexistent' };

function fakeCounter() {
  const calls = [];
  return { calls, check: (s) => calls.push(['check', s.unit]), sampled: (s, n) => calls.push(['sampled', s.unit, n]), forget: (u) => calls.push(['forget', u]) };
}

test('oom reads: a change while the feed is awake reads nothing; the next sample tells its count', () => {
  const c = fakeCounter();
  const r = new OomReads(c, 500, () => 0);
  r.changed(S, true);
  r.changed(S, true);
  assert.deepEqual(c.calls, [], 'no read of its own while the feed is awake');
  assert.equal(r.owedCount, 1);
  r.sampled(S, 3);
  assert.deepEqual(c.calls, [['sampled', 'a.scope', 3]]);
  assert.equal(r.owedCount, 0, 'the sample paid what was owed');
  r.sampled(S, undefined);
  assert.deepEqual(c.calls, [['sampled', 'a.scope', 3]], 'a sample without the counter tells nothing');
});

test('oom reads: a change while the feed sleeps is read at once, then at most once per interval with a trailing read', async () => {
  const c = fakeCounter();
  let now = 0;
  const r = new OomReads(c, 40, () => now);
  r.changed(S, false);
  assert.deepEqual(c.calls, [['check', 'a.scope']]);
  now = 10;
  r.changed(S, false);
  r.changed(S, false);
  assert.equal(c.calls.length, 1, 'a burst waits for the trailing read');
  now = 60;
  await new Promise((resolve) => setTimeout(resolve, 60));
  assert.deepEqual(c.calls, [['check', 'a.scope'], ['check', 'a.scope']], 'one trailing read for the burst');
  r.removed(S);
});

test('oom reads: a session removed with a read owed to its feed, or one waiting in the throttle, is read then, and forgotten', () => {
  const c = fakeCounter();
  let now = 0;
  const r = new OomReads(c, 10_000, () => now);
  r.changed(S, true);
  r.removed(S);
  assert.deepEqual(c.calls, [['check', 'a.scope'], ['forget', 'a.scope']], 'the owed read, then forgotten');
  assert.equal(r.owedCount, 0);

  const d = fakeCounter();
  const q = new OomReads(d, 10_000, () => now);
  q.changed(S, false);
  now = 5;
  q.changed(S, false); // waits in the throttle
  assert.equal(d.calls.length, 1);
  q.removed(S);
  assert.deepEqual(d.calls, [['check', 'a.scope'], ['check', 'a.scope'], ['forget', 'a.scope']], 'the waiting read now');

  const e = fakeCounter();
  const p = new OomReads(e, 10_000, () => now);
  p.changed(S, true);
  p.sampled(S, 0);
  p.removed(S);
  assert.deepEqual(e.calls, [['sampled', 'a.scope', 0], ['forget', 'a.scope']], 'nothing owed: no read at removal');
});

test('oom reads: the kernel killed the last process while the feed was awake; the session ends before its next sample, and the kill is told', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sb-oomreads-'));
  const events = (n) => `low 0\nhigh 10\nmax 3\noom ${n}\noom_kill ${n}\noom_group_kill 0\n`;
  for (const [f, t] of [['memory.current', '0\n'], ['memory.high', 'max\n'], ['memory.max', `${64 * 2 ** 20}\n`], ['memory.events', events(0)], ['memory.events.local', events(0)]]) fs.writeFileSync(path.join(dir, f), t);
  const told = [];
  const watch = new OomKillWatch({ tell: (i) => told.push(i), observeOnly: false, readKmsg: () => ({ records: [] }), now: () => 1 });
  const s = { ...S, cgroupDir: dir };
  watch.watch(s);
  const r = new OomReads(watch, 500, () => 0);
  fs.writeFileSync(path.join(dir, 'memory.events.local'), events(1));
  r.changed(s, true);
  assert.deepEqual(told, [], 'owed to the next sample');
  r.removed(s);
  assert.equal(told.length, 1);
  assert.equal(told[0].type, 'oom-kill');
  assert.equal(told[0].count, 1);
  fs.rmSync(dir, { recursive: true, force: true });
});
