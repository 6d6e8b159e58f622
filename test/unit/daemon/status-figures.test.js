// @ts-check
'use strict';
// Issue 15, item 2: sbd answers status from its last reading of each session's files, reads first
// only what it never read or read too long ago, reads again after the answer, and never reads
// more than SESSIONS_PER_TURN sessions, nor for longer than TURN_BUDGET_MS, in one turn of the event loop.
const test = require('node:test');
const assert = require('node:assert/strict');
const { CgroupGoneError } = require('../../../dist/cgroup/read.js');
const { StatusFigures, plan, STALE_LIMIT_MS, REREAD_AFTER_MS, REREAD_PAUSE_MS, SESSIONS_PER_TURN, TURN_BUDGET_MS } = require('../../../dist/daemon/status-figures.js');

const figures = (currentBytes) => ({ currentBytes, highBytes: Infinity, maxBytes: Infinity, swapMaxBytes: 0, anonShare: 0.5, pressureFullAvg10: 0, processes: 1, biggest: null });
const sessions = (n) => Array.from({ length: n }, (_, i) => ({ unit: `s${i}.scope`, cgroupDir: `/cg/s${i}` }));

/** A StatusFigures over fake files (each read gives the read's number) and a clock of our own. */
function harness() {
  const h = {
    nowMs: 1_000_000,
    readMs: 0, // how long each read takes on the clock
    reads: /** @type {string[]} */ ([]),
    turns: /** @type {number[]} */ ([]), // reads done when each turn was yielded
    gone: new Set(),
    broken: new Set(),
    sleeps: /** @type {number[]} */ ([]),
    holdPause: false, // the pause before a re-read lasts until a call ends it
    storm: false, // deferReread's answer
  };
  const fig = new StatusFigures({
    read: (dir) => {
      if (h.gone.has(dir)) throw new CgroupGoneError(dir);
      if (h.broken.has(dir)) throw Object.assign(new Error(`EACCES: ${dir}`), { code: 'EACCES' });
      h.reads.push(dir);
      h.nowMs += h.readMs;
      return figures(h.reads.length);
    },
    now: () => h.nowMs,
    turn: () => {
      h.turns.push(h.reads.length);
      return new Promise((resolve) => setImmediate(resolve));
    },
    sleep: (ms) => {
      h.sleeps.push(ms);
      return h.holdPause ? new Promise(() => {}) : new Promise((resolve) => setImmediate(resolve));
    },
    deferReread: () => h.storm,
  });
  /** Lets the background reading run to its end. */
  const settle = async () => {
    for (let i = 0; i < 1000; i++) await new Promise((resolve) => setImmediate(resolve));
  };
  return { h, fig, settle };
}

test('plan: never read or older than the stale limit is read first; older than a window, after the answer; younger, not at all', () => {
  const now = 100_000;
  const r = (ageMs) => ({ figures: figures(1), atMs: now - ageMs });
  const s = sessions(4);
  const readings = new Map([[s[1].unit, r(STALE_LIMIT_MS + 1)], [s[2].unit, r(REREAD_AFTER_MS + 1)], [s[3].unit, r(REREAD_AFTER_MS)]]);
  const p = plan(s, readings, now);
  assert.deepEqual(p.before.map((x) => x.unit), ['s0.scope', 's1.scope']);
  assert.deepEqual(p.after.map((x) => x.unit), ['s2.scope']);
});

test('the first call reads every session before answering, SESSIONS_PER_TURN a turn; the next is answered from that reading', async () => {
  const { h, fig, settle } = harness();
  const s = sessions(2 * SESSIONS_PER_TURN + 3);
  const first = await fig.get(s);
  assert.equal(first.size, s.length);
  assert.equal(h.reads.length, s.length);
  assert.ok(h.turns.length >= 3, `${h.turns.length} turns`);
  for (let i = 1; i < h.turns.length; i++) assert.ok(h.turns[i] - h.turns[i - 1] <= SESSIONS_PER_TURN, `turn ${i} read ${h.turns[i] - h.turns[i - 1]}`);
  assert.ok(h.turns[0] <= SESSIONS_PER_TURN);

  h.nowMs += REREAD_AFTER_MS - 1; // within a window: answered as is, nothing read again
  const second = await fig.get(s);
  await settle();
  assert.equal(h.reads.length, s.length, 'nothing read again within a window');
  assert.deepEqual(second.get('s0.scope'), first.get('s0.scope'));

  h.nowMs += 2; // older than a window: answered from the reading, read again after it
  const third = await fig.get(s);
  assert.equal(third.get('s0.scope')?.figures.currentBytes, 1, 'the answer is the earlier reading');
  assert.equal(h.reads.length, s.length, 'nothing read before the answer');
  await settle();
  assert.equal(h.reads.length, 2 * s.length, 'read again after the answer');
  const fourth = await fig.get(s);
  assert.equal(fourth.get('s0.scope')?.figures.currentBytes, s.length + 1, 'the next answer has the new reading');
  assert.equal(fourth.get('s0.scope')?.atMs, h.nowMs);
});

test('a reading older than the stale limit is read again before the answer; a new session too, alone', async () => {
  const { h, fig, settle } = harness();
  const s = sessions(3);
  await fig.get(s);
  await settle();
  h.nowMs += STALE_LIMIT_MS + 1;
  const got = await fig.get(s);
  assert.equal(h.reads.length, 6);
  assert.equal(got.get('s2.scope')?.figures.currentBytes, 6, 'fresh');
  const more = [...s, { unit: 'new.scope', cgroupDir: '/cg/new' }];
  const withNew = await fig.get(more);
  assert.deepEqual(h.reads.slice(6), ['/cg/new'], 'only the new session read before the answer');
  assert.equal(withNew.get('new.scope')?.figures.currentBytes, 7);
});

test('a session whose cgroup vanished has no reading (no row); one forgotten is read no more; another error fails the answer', async () => {
  const { h, fig, settle } = harness();
  const s = sessions(3);
  h.gone.add('/cg/s1');
  const got = await fig.get(s);
  assert.deepEqual([...got.keys()].sort(), ['s0.scope', 's2.scope']);
  fig.forget('s2.scope');
  h.nowMs += REREAD_AFTER_MS + 1;
  await fig.get([s[0]]);
  await settle();
  assert.deepEqual(h.reads, ['/cg/s0', '/cg/s2', '/cg/s0']);
  h.broken.add('/cg/bad');
  await assert.rejects(fig.get([{ unit: 'bad.scope', cgroupDir: '/cg/bad' }]), /EACCES/);
  h.broken.clear();
  assert.equal((await fig.get([{ unit: 'bad.scope', cgroupDir: '/cg/bad' }])).get('bad.scope')?.figures.currentBytes, 4, 'read again on the next call');
});

test('an answer that needs a reading is not kept behind a background reading of many sessions', async () => {
  const { h, fig } = harness();
  const s = sessions(10 * SESSIONS_PER_TURN);
  await fig.get(s);
  h.nowMs += REREAD_AFTER_MS + 1;
  await fig.get(s); // starts reading all of them again, in the background
  const before = h.reads.length;
  await fig.get([{ unit: 'new.scope', cgroupDir: '/cg/new' }]);
  assert.ok(h.reads.length - before <= 2 * SESSIONS_PER_TURN + 1, `${h.reads.length - before} reads before the new session's answer`);
  assert.ok(h.reads.includes('/cg/new'));
});

test('a feed\'s sample noted on the same clock serves the answer when newer than the reading; an older one is ignored', async () => {
  const { h, fig, settle } = harness();
  const s = sessions(1);
  fig.note('s0.scope', figures(100), h.nowMs - 10); // a feed sampled it a moment ago: nothing to read
  assert.equal((await fig.get(s)).get('s0.scope')?.figures.currentBytes, 100);
  await settle();
  assert.deepEqual(h.reads, []);
  fig.note('s0.scope', figures(50), h.nowMs - 20); // older than what is held
  assert.equal((await fig.get(s)).get('s0.scope')?.figures.currentBytes, 100);
  h.nowMs += REREAD_AFTER_MS + 1;
  await fig.get(s);
  await settle();
  fig.note('s0.scope', figures(200), h.nowMs - 1); // older than the reading just taken
  assert.equal((await fig.get(s)).get('s0.scope')?.figures.currentBytes, 1);
  fig.note('s0.scope', figures(300), h.nowMs + 1);
  assert.equal((await fig.get(s)).get('s0.scope')?.figures.currentBytes, 300);
});

test('property: every answer goes out, whatever the order of calls, sessions ending, feeds\' samples and cgroups vanishing', async () => {
  const fc = require('fast-check');
  await fc.assert(fc.asyncProperty(fc.array(fc.record({ op: fc.constantFrom('get', 'get', 'forget', 'note', 'tick', 'gone'), n: fc.integer({ min: 0, max: 40 }), adv: fc.integer({ min: 0, max: 2 * STALE_LIMIT_MS }) }), { minLength: 1, maxLength: 40 }), async (ops) => {
    let now = 0;
    const gone = new Set();
    const fig = new StatusFigures({ read: (dir) => { if (gone.has(dir)) throw new CgroupGoneError(dir); return figures(1); }, now: () => now, turn: () => new Promise((resolve) => setImmediate(resolve)) });
    const answered = [];
    for (const o of ops) {
      if (o.op === 'get') {
        const i = answered.push(false) - 1;
        void fig.get(sessions(o.n)).then(() => { answered[i] = true; });
      } else if (o.op === 'forget') fig.forget(`s${o.n}.scope`);
      else if (o.op === 'note') fig.note(`s${o.n}.scope`, figures(2), now);
      else if (o.op === 'gone') gone.add(`/cg/s${o.n}`);
      else now += o.adv;
      if (o.n % 3 === 0) await new Promise((resolve) => setImmediate(resolve)); // some ops land while a reading runs
    }
    for (let t = 0; t < 2000 && answered.includes(false); t++) await new Promise((resolve) => setImmediate(resolve));
    assert.ok(!answered.includes(false), 'an answer never went out');
  }), { numRuns: 100 });
});

test('the re-read after an answer waits REREAD_PAUSE_MS (the caller works on its answer meanwhile); a call that needs a reading ends the pause', async () => {
  const { h, fig, settle } = harness();
  const s = sessions(3);
  await fig.get(s);
  h.nowMs += REREAD_AFTER_MS + 1;
  h.holdPause = true;
  const reads = h.reads.length;
  await fig.get(s); // answered from the reading; the re-read is planned
  await settle();
  assert.deepEqual(h.sleeps, [REREAD_PAUSE_MS], 'one pause of REREAD_PAUSE_MS');
  assert.equal(h.reads.length, reads, 'nothing re-read during the pause');
  // a new session: this call needs a reading before its answer, and does not wait out the pause
  const more = [...s, { unit: 'new.scope', cgroupDir: '/cg/new' }];
  const answer = await Promise.race([fig.get(more), new Promise((resolve) => setTimeout(() => resolve('waited'), 2000))]);
  assert.notEqual(answer, 'waited', 'answered without waiting for the pause');
  assert.ok(/** @type {Map<string, unknown>} */ (answer).has('new.scope'));
  await settle();
  assert.equal(h.reads.length, reads + 1, 'the new session read; the others wait again, this answer having gone out');
  assert.deepEqual(h.sleeps, [REREAD_PAUSE_MS, REREAD_PAUSE_MS]);
});

test('a turn of reading ends once it took TURN_BUDGET_MS, before SESSIONS_PER_TURN: slow reads (the emulated guest) leave the feeds\' timers their turn', async () => {
  const { h, fig } = harness();
  h.readMs = 4; // three reads pass the 10 ms budget
  const s = sessions(SESSIONS_PER_TURN);
  const first = await fig.get(s);
  assert.equal(first.size, s.length, 'every session read before the answer all the same');
  const perTurn = h.turns.map((n, i) => n - (i === 0 ? 0 : h.turns[i - 1])).filter((n) => n > 0);
  const most = Math.ceil(TURN_BUDGET_MS / h.readMs);
  assert.ok(perTurn.every((n) => n <= most), `reads a turn: ${perTurn.join(' ')}, each at most ${most}`);
  assert.ok(perTurn.length >= Math.ceil(SESSIONS_PER_TURN / most), `${perTurn.length} turns`);
  h.readMs = 50; // one read alone takes longer than the budget: one a turn, never none
  h.nowMs += STALE_LIMIT_MS + 1;
  const turnsBefore = h.turns.length;
  await fig.get(s.slice(0, 3));
  assert.deepEqual(h.turns.slice(turnsBefore).map((n, i, a) => n - (i === 0 ? h.turns[turnsBefore - 1] : a[i - 1])).filter((n) => n > 0), [1, 1, 1]);
});

test('in a storm (deferReread) the re-read after an answer waits, asked again after each pause; an answer that needs a reading is read at once; after the storm the re-read runs', async () => {
  const { h, fig, settle } = harness();
  const s = sessions(20);
  await fig.get(s);
  h.nowMs += REREAD_AFTER_MS + 1;
  h.storm = true;
  const before = h.reads.length;
  await fig.get(s); // answered from the last reading; the re-read is due, and waits
  await settle();
  assert.equal(h.reads.length, before, 'nothing read again while the storm lasts');
  assert.ok(h.sleeps.length >= 2 && h.sleeps.every((ms) => ms === REREAD_PAUSE_MS), `pauses: ${h.sleeps.join(' ')}`);
  await fig.get([...s, { unit: 'new.scope', cgroupDir: '/cg/new' }]);
  assert.deepEqual(h.reads.slice(before), ['/cg/new'], 'a new session is read before its answer, storm or not, and nothing else');
  h.storm = false;
  await settle();
  assert.deepEqual(new Set(h.reads.slice(before + 1)), new Set(s.map((x) => x.cgroupDir)), 'the storm over, every session is read again');
});
