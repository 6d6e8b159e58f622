// @ts-check
'use strict';
// The slice detector (design.md §11): hot only when a member stalls and the slice's brake, its
// ceiling or the machine is the cause; two hot windows, then a grace; no grace when the machine
// is nearly out of memory. Replayed on the recorded neighbour trace too.
const test = require('node:test');
const assert = require('node:assert/strict');
const { stepSlice, initialSliceState, resetSliceEpisode, noteMembers, redateNote, BASELINE_SPAN_MS, REDATE_UP_TO_MS } = require('../../../dist/slice/detector.js');
const { chooseCulprit } = require('../../../dist/slice/culprit.js');
const { parseConfig } = require('../../../dist/config/load.js');
const { loadTrace } = require('../../support/traces.js');

const MiB = 2 ** 20;
const GiB = 2 ** 30;
const cfg = parseConfig({ detector: { graceS: 10 } }, 'test').detector;
const limits = { reserveBytes: 1 * GiB, criticalAvailableShare: 0.05, culpritMinGrowthBytes: 64 * MiB };

/** A slice of two members; next() advances one 2 s window. */
function slice({ high = 320 * MiB, max = Infinity, avail = 8 * GiB, total = 16 * GiB } = {}) {
  let s = { atMs: 0, currentBytes: 0, highBytes: high, maxBytes: max, anonBytes: 0, shmemBytes: 0, highEvents: 0, maxEvents: 0, memAvailableBytes: avail, memTotalBytes: total,
    members: [{ path: 'a.scope', currentBytes: 160 * MiB, fullUs: 0 }, { path: 'b.scope', currentBytes: 100 * MiB, fullUs: 0 }] };
  const sum = (x) => ({ ...x, currentBytes: x.members.reduce((n, m) => n + m.currentBytes, 0), anonBytes: x.members.reduce((n, m) => n + m.currentBytes, 0) });
  s = sum(s);
  return {
    first: () => ({ ...s }),
    next({ shareA = 0, shareB = 0, growB = 0, highEvents = 0, avail = s.memAvailableBytes, dt = 2000 } = {}) {
      const [a, b] = s.members;
      s = sum({ ...s, atMs: s.atMs + dt, highEvents: s.highEvents + highEvents, memAvailableBytes: avail, members: [
        { ...a, fullUs: a.fullUs + shareA * dt * 1000 },
        { ...b, currentBytes: b.currentBytes + growB, fullUs: b.fullUs + shareB * dt * 1000 },
      ] });
      return { ...s };
    },
  };
}

function run(samples, l = limits) {
  let st = initialSliceState();
  return samples.map((x) => {
    const [next, v] = stepSlice(st, x, cfg, l);
    st = next;
    return v;
  });
}

test("members stalling against the slice's brake: two hot windows, then standing still with the grace", () => {
  const s = slice();
  const vs = run([s.first(), s.next({ shareA: 0.8, shareB: 0.9, growB: 30 * MiB, highEvents: 50 }), s.next({ shareA: 0.8, shareB: 0.9, highEvents: 50 }), s.next({ shareA: 0.8, shareB: 0.9, highEvents: 50 })]);
  assert.deepEqual(vs.map((v) => v.event), ['first-sample', 'window', 'standing-still', 'window']);
  const ep = vs[2].episode;
  assert.equal(ep.cause, 'slice-brake');
  assert.equal(ep.endsAtMs - ep.startedAtMs, 10_000);
  assert.equal(ep.membersAtStart['b.scope'], 100 * MiB, 'the baseline is taken before the first hot window');
  assert.equal(vs[1].window.stalledMember, 'b.scope');
});

test('members stalling with neither the slice nor the machine bound: clear (their own brakes are their business)', () => {
  const s = slice({ high: Infinity });
  const vs = run([s.first(), s.next({ shareA: 0.9 }), s.next({ shareA: 0.9 }), s.next({ shareA: 0.9 })]);
  assert.deepEqual(vs.filter((v) => v.window && v.window.kind !== 'clear'), []);
  assert.match(vs[1].window.reason, /neither the slice's brake/);
});

test('the deadline expires after the grace; a clear window ends the episode', () => {
  const s = slice();
  const hot = { shareA: 0.8, shareB: 0.9, highEvents: 10 };
  const vs = run([s.first(), s.next(hot), s.next(hot), s.next(hot), s.next(hot), s.next(hot), s.next(hot), s.next(hot), s.next({})]);
  assert.deepEqual(vs.map((v) => v.event), ['first-sample', 'window', 'standing-still', 'window', 'window', 'window', 'window', 'deadline-expired', 'cleared']);
});

test('the machine short of memory is a cause; nearly out of it, there is no grace', () => {
  const s = slice({ high: Infinity, avail: 4 * GiB, total: 8 * GiB });
  const short = run([s.first(), s.next({ shareB: 0.7, avail: 800 * MiB }), s.next({ shareB: 0.7, avail: 700 * MiB })]);
  assert.equal(short[2].event, 'standing-still');
  assert.equal(short[2].episode.cause, 'machine');
  const s2 = slice({ high: Infinity });
  const crit = run([s2.first(), s2.next({ avail: 900 * MiB }), s2.next({ growB: 200 * MiB, avail: 500 * MiB })]);
  assert.equal(crit[1].event, 'window', 'short of memory but nobody stalls: nothing yet');
  assert.equal(crit[2].event, 'critical', 'below 5 % of 16 GiB: at once, no stall needed');
  assert.equal(crit[2].episode.endsAtMs, crit[2].episode.startedAtMs, 'no grace');
});

test('critical on the very first sample (the feed just woke)', () => {
  const s = slice({ high: Infinity, avail: 100 * MiB });
  const [v] = run([s.first()]);
  assert.equal(v.event, 'critical');
});

test('page cache under the slice brake (anon fuse open) is clear', () => {
  const s = slice();
  const first = s.first();
  const b = s.next({ shareA: 0.9, shareB: 0.9, highEvents: 10 });
  const vs = run([first, { ...b, anonBytes: b.currentBytes * 0.3 }]);
  assert.equal(vs[1].window.kind, 'clear');
  assert.match(vs[1].window.reason, /page cache/);
});

test('resetSliceEpisode starts over', () => {
  const s = slice();
  const hot = { shareA: 0.8, shareB: 0.9, highEvents: 10 };
  let st = initialSliceState();
  for (const x of [s.first(), s.next(hot), s.next(hot)]) [st] = stepSlice(st, x, cfg, limits);
  assert.ok(st.episode);
  st = resetSliceEpisode(st);
  assert.equal(st.episode, undefined);
  assert.equal(st.hotWindows, 0);
});

/** The recorded neighbour trace as slice samples every 2 s: the slice is the two scopes under a 320 MiB brake. */
function neighbourSlice() {
  const records = loadTrace('neighbour');
  const out = [];
  const byT = new Map();
  for (const r of records) {
    const list = byT.get(r.t_ms) ?? [];
    list.push(r);
    byT.set(r.t_ms, list);
  }
  let next = 0;
  for (const [t, rs] of [...byT.entries()].sort((a, b) => a[0] - b[0])) {
    if (t < next) continue;
    next = t + 2000 - 125;
    const live = rs.filter((r) => !r.gone);
    const current = live.reduce((n, r) => n + r.current, 0);
    out.push({ atMs: t, currentBytes: current, highBytes: 320 * MiB, maxBytes: Infinity, anonBytes: live.reduce((n, r) => n + r.anon, 0), shmemBytes: 0,
      highEvents: 0, maxEvents: 0, memAvailableBytes: 2 * GiB, memTotalBytes: 3 * GiB,
      members: live.map((r) => ({ path: r.unit, currentBytes: r.current, fullUs: r.pressure_full_us })) });
  }
  return out;
}

test('neighbour trace: the slice stands still against its brake and the greedy one is the culprit, never the innocent', () => {
  const samples = neighbourSlice();
  const vs = run(samples);
  const still = vs.findIndex((v) => v.event === 'standing-still');
  assert.ok(still > 0, 'the slice stands still');
  assert.equal(vs[still].episode.cause, 'slice-brake');
  assert.ok(samples[still].atMs > 25_000, `only after the greedy one arrived (at ${samples[still].atMs} ms)`);
  // judged at the deadline, and at every later window: always the greedy one
  for (let i = still; i < vs.length; i++) {
    const ep = vs[i].episode;
    if (!ep) continue;
    const c = chooseCulprit(samples[i].members, ep.membersAtStart, 320 * MiB, 64 * MiB);
    assert.notEqual(c.culprit?.path, 'innocent.scope', `window ${i}: ${c.why}`);
  }
  const atExpiry = vs.findIndex((v) => v.event === 'deadline-expired');
  assert.ok(atExpiry > still, 'the grace runs out');
  const c = chooseCulprit(samples[atExpiry].members, vs[atExpiry].episode.membersAtStart, 320 * MiB, 64 * MiB);
  assert.equal(c.culprit?.path, 'greedy.scope', c.why);
});

test('the single-session traces never make a slice without a brake stand still', () => {
  for (const name of ['wedged', 'pagecache', 'healthy', 'raised']) {
    const records = loadTrace(name).filter((r) => !r.gone);
    const samples = [];
    let next = 0;
    for (const r of records) {
      if (r.t_ms < next) continue;
      next = r.t_ms + 2000 - 125;
      samples.push({ atMs: r.t_ms, currentBytes: r.current, highBytes: Infinity, maxBytes: Infinity, anonBytes: r.anon, shmemBytes: r.shmem, highEvents: 0, maxEvents: 0,
        memAvailableBytes: 2 * GiB, memTotalBytes: 3 * GiB, members: [{ path: r.unit, currentBytes: r.current, fullUs: r.pressure_full_us }] });
    }
    assert.deepEqual(run(samples).filter((v) => v.state !== 'clear' && v.event !== 'first-sample').map((v) => v.explain), [], name);
  }
});

test('the baseline reaches back before the stall: a greedy member that filled the brake in seconds grew most', () => {
  // as measured in the guest: the greedy one fills the slice within seconds, then barely moves
  let st = initialSliceState();
  st = noteMembers(st, 0, [{ path: 'innocent.scope', currentBytes: 180 * MiB }]);
  st = noteMembers(st, 20_000, [{ path: 'innocent.scope', currentBytes: 180 * MiB }, { path: 'greedy.scope', currentBytes: 5 * MiB }]);
  const members = (greedy, fullI, fullG) => [{ path: 'innocent.scope', currentBytes: 180 * MiB, fullUs: fullI }, { path: 'greedy.scope', currentBytes: greedy, fullUs: fullG }];
  const at = (t, greedy, full) => ({ atMs: t, currentBytes: 180 * MiB + greedy, highBytes: 320 * MiB, maxBytes: Infinity, anonBytes: 180 * MiB + greedy, shmemBytes: 0,
    highEvents: t, maxEvents: 0, memAvailableBytes: 8 * GiB, memTotalBytes: 16 * GiB, members: members(greedy, full, full) });
  const vs = [];
  for (const x of [at(30_000, 139 * MiB, 0), at(32_000, 140 * MiB, 1_800_000), at(34_000, 140 * MiB, 3_600_000)]) {
    const [next, v] = stepSlice(st, x, cfg, limits);
    st = next;
    vs.push(v);
  }
  assert.equal(vs[2].event, 'standing-still');
  assert.deepEqual(vs[2].episode.membersAtStart, { 'innocent.scope': 180 * MiB, 'greedy.scope': 5 * MiB }, 'the latest snapshot within the span that still had room: before the greedy one grew');
  const c = chooseCulprit(at(34_000, 140 * MiB, 0).members, vs[2].episode.membersAtStart, 320 * MiB, 64 * MiB);
  assert.equal(c.culprit?.path, 'greedy.scope');
  assert.equal(c.culprit?.rule, 'grew-most');
  // older than the span: forgotten
  const later = noteMembers(st.episode ? resetSliceEpisode(st) : st, 20_000 + BASELINE_SPAN_MS + 10_000, []);
  assert.ok(later.history.every((h) => h.atMs > 20_000));
});

test('redateNote: a steady slice\'s note stands for now while the same members are listed and its read is under REDATE_UP_TO_MS old; a stall after hours of calm still finds the baseline', () => {
  let st = noteMembers(initialSliceState(), 0, [{ path: 'innocent.scope', currentBytes: 180 * MiB }, { path: 'greedy.scope', currentBytes: 5 * MiB }]);
  assert.equal(redateNote(initialSliceState(), 30_000, []), undefined, 'no note: read');
  assert.equal(redateNote(st, 30_000, ['innocent.scope']), undefined, 'a member went: read');
  assert.equal(redateNote(st, 30_000, ['innocent.scope', 'greedy.scope', 'new.scope']), undefined, 'a member came: read');
  assert.equal(redateNote(st, 30_000, ['innocent.scope', 'other.scope']), undefined, 'another member: read');
  assert.equal(redateNote(st, REDATE_UP_TO_MS, ['greedy.scope', 'innocent.scope']), undefined, 'the sizes read REDATE_UP_TO_MS ago: read');
  for (let t = 30_000; t < REDATE_UP_TO_MS; t += 30_000) st = /** @type {any} */ (redateNote(st, t, ['greedy.scope', 'innocent.scope']));
  assert.deepEqual(st.history.map((h) => [h.atMs, h.readAtMs]), [[210_000, 0], [240_000, 0], [270_000, 0]], 'the notes within the span (60 s), each saying when its sizes were read');
  assert.equal(redateNote(st, REDATE_UP_TO_MS + 1_000, ['greedy.scope', 'innocent.scope']), undefined, 're-dated or not, the read is what ages');
  assert.equal(redateNote({ ...st, hotWindows: 1 }, 280_000, ['greedy.scope', 'innocent.scope']), undefined, 'no note while hot');
  // the greedy one fills the brake within seconds of the last re-dated note: it is the culprit
  const at = (t, greedy, full) => ({ atMs: t, currentBytes: 180 * MiB + greedy, highBytes: 320 * MiB, maxBytes: Infinity, anonBytes: 180 * MiB + greedy, shmemBytes: 0,
    highEvents: t, maxEvents: 0, memAvailableBytes: 8 * GiB, memTotalBytes: 16 * GiB,
    members: [{ path: 'innocent.scope', currentBytes: 180 * MiB, fullUs: full }, { path: 'greedy.scope', currentBytes: greedy, fullUs: full }] });
  const vs = [];
  for (const x of [at(280_000, 139 * MiB, 0), at(282_000, 140 * MiB, 1_800_000), at(284_000, 140 * MiB, 3_600_000)]) {
    const [next, v] = stepSlice(st, x, cfg, limits);
    st = next;
    vs.push(v);
  }
  assert.equal(vs[2].event, 'standing-still');
  assert.deepEqual(vs[2].episode.membersAtStart, { 'innocent.scope': 180 * MiB, 'greedy.scope': 5 * MiB });
  assert.equal(chooseCulprit(at(284_000, 140 * MiB, 0).members, vs[2].episode.membersAtStart, 320 * MiB, 64 * MiB).culprit?.path, 'greedy.scope');
});

test('the baseline is the latest snapshot with room under the limit: an innocent that started a little earlier and settled is not "growing"', () => {
  // as seen in the guest without load: the innocent started 30 s before the greedy one
  let st = initialSliceState();
  st = noteMembers(st, 0, [{ path: 'innocent.scope', currentBytes: 5 * MiB }]);
  st = noteMembers(st, 20_000, [{ path: 'innocent.scope', currentBytes: 177 * MiB }]);
  st = noteMembers(st, 30_000, [{ path: 'innocent.scope', currentBytes: 177 * MiB }, { path: 'greedy.scope', currentBytes: 20 * MiB }]);
  const at = (t, full) => ({ atMs: t, currentBytes: 323 * MiB, highBytes: 320 * MiB, maxBytes: Infinity, anonBytes: 323 * MiB, shmemBytes: 0, highEvents: t, maxEvents: 0,
    memAvailableBytes: 8 * GiB, memTotalBytes: 16 * GiB, members: [{ path: 'innocent.scope', currentBytes: 177 * MiB, fullUs: full }, { path: 'greedy.scope', currentBytes: 146 * MiB, fullUs: full }] });
  const vs = [];
  for (const x of [at(36_000, 0), at(38_000, 1_500_000), at(40_000, 3_000_000)]) {
    const [next, v] = stepSlice(st, x, cfg, limits);
    st = next;
    vs.push(v);
  }
  assert.equal(vs[2].event, 'standing-still');
  assert.deepEqual(vs[2].episode.membersAtStart, { 'innocent.scope': 177 * MiB, 'greedy.scope': 20 * MiB });
  const c = chooseCulprit(at(40_000, 0).members, vs[2].episode.membersAtStart, 320 * MiB, 64 * MiB);
  assert.equal(c.culprit?.path, 'greedy.scope', c.why);
});

test("without PSI (no members' pressure): the slice's own brake firing while it does not grow is hot; growth clears; the grace is doubled", () => {
  // booted psi=0: every member's full total reads 0, so no member ever "stalls" by pressure; the
  // fallback measure of design.md §4, one level up: the slice's brake fired and it did not grow.
  const s = slice();
  const nopsi = (x) => ({ ...x, psi: false });
  const vs = run([s.first(), s.next({ highEvents: 50 }), s.next({ highEvents: 50 }), s.next({ highEvents: 0 }), s.next({ growB: 16 * MiB })].map(nopsi));
  assert.deepEqual(vs.map((v) => v.event), ['first-sample', 'window', 'standing-still', 'window', 'cleared']);
  assert.equal(vs[1].window.kind, 'hot');
  assert.equal(vs[2].episode.endsAtMs - vs[2].episode.startedAtMs, 20_000, 'doubled grace');
  assert.equal(vs[3].window.kind, 'warm', 'neither braked nor grown: keeps the episode');
  assert.match(vs[1].window.reason, /no PSI/);
});

test("membersPressureNeeded: the members' pressure is read only when something binds the slice or may within a window", () => {
  const { membersPressureNeeded, MACHINE_NEAR_RESERVE_FACTOR } = require('../../../dist/slice/detector.js');
  const own = (o = {}) => ({ atMs: 0, currentBytes: 1 * GiB, highBytes: Infinity, maxBytes: Infinity, anonBytes: 1 * GiB, shmemBytes: 0, highEvents: 0, maxEvents: 0, memAvailableBytes: 8 * GiB, memTotalBytes: 16 * GiB, psi: true, ...o });
  assert.equal(membersPressureNeeded(undefined, own(), cfg, limits), false, 'no brake, no ceiling, the machine roomy: a window is clear whatever the members say');
  assert.equal(membersPressureNeeded(undefined, own({ highBytes: 2 * GiB }), cfg, limits), true, 'a slice with a brake');
  assert.equal(membersPressureNeeded(undefined, own({ maxBytes: 2 * GiB }), cfg, limits), true, 'a slice with a ceiling');
  assert.equal(membersPressureNeeded(undefined, own({ memAvailableBytes: MACHINE_NEAR_RESERVE_FACTOR * limits.reserveBytes - 1 }), cfg, limits), true, 'the machine near its reserve');
  assert.equal(membersPressureNeeded(own(), own({ highEvents: 1 }), cfg, limits), true, "the slice's brake fired (a brake set since)");
  assert.equal(membersPressureNeeded(undefined, own({ psi: false }), cfg, limits), false, 'no PSI: the fallback measure');
});

test("a window without the members' pressure at its start is clear when nothing binds, warm when something does (never hot on made-up totals)", () => {
  const { classifySliceWindow } = require('../../../dist/slice/detector.js');
  const sl = slice({ high: Infinity });
  const a = { ...sl.first(), membersPressure: false };
  const b = sl.next({ shareA: 0.9 });
  const clear = classifySliceWindow(a, b, cfg, limits);
  assert.equal(clear.kind, 'clear');
  assert.equal(clear.share, 0, "no share from a start whose fullUs were not read");
  const short = classifySliceWindow(a, { ...b, memAvailableBytes: 0.9 * GiB, members: b.members.map((m) => ({ ...m, fullUs: m.fullUs + 1e9 })) }, cfg, limits);
  assert.equal(short.kind, 'warm', 'the machine short, the members unknown at the start: judged on the next window');
  assert.match(short.reason, /not read/);
  // both ends read: judged as ever
  assert.equal(classifySliceWindow(sl.first(), { ...sl.next({ shareA: 0.9 }), memAvailableBytes: 0.9 * GiB }, cfg, limits).kind, 'hot');
});

test("a member's figures from its session feed: its share over its own span; the same sample at both ends says nothing", () => {
  const { classifySliceWindow } = require('../../../dist/slice/detector.js');
  const sl = slice();
  const a = sl.first();
  // the slice's window is 2 s (0 → 2000); a.scope's feed read it at 900 and 2,500 ms: 1.6 s apart
  const b = sl.next({ highEvents: 1 });
  const fromFeed = (m, atMs, fullUs) => ({ ...m, atMs, fullUs });
  const at = (x, members) => ({ ...x, members });
  const w = classifySliceWindow(at(a, [fromFeed(a.members[0], -900, 0), a.members[1]]), at(b, [fromFeed(b.members[0], 700, 0.4 * 1.6e6), b.members[1]]), cfg, limits);
  assert.equal(w.stalledMember, 'a.scope');
  assert.ok(Math.abs(w.share - 0.4) < 1e-9, `share over the member's 1.6 s, not the slice's 2 s (${w.share})`);
  assert.equal(w.kind, 'hot');
  const same = classifySliceWindow(at(a, [fromFeed(a.members[0], 700, 0), a.members[1]]), at(b, [fromFeed(b.members[0], 700, 5e6), b.members[1]]), cfg, limits);
  assert.equal(same.share, 0, 'no time between its readings: no share');
  assert.equal(same.kind, 'clear');
});
