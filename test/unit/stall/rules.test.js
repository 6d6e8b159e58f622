// @ts-check
'use strict';
// One test per rule of design.md §4, each built so that it fails when its rule is removed.
const test = require('node:test');
const assert = require('node:assert/strict');
const fc = require('fast-check');
const { step, initialState, classifyWindow, muteAfterLowering, resetEpisode } = require('../../../dist/stall/detector.js');
const { parseConfig } = require('../../../dist/config/load.js');

const cfg = parseConfig({}, 'defaults').detector;
const MiB = 2 ** 20;

/**
 * A session over time: each call to next() advances one window, adding `share` of full stall,
 * `ownHigh` brake breaches and `grow` bytes.
 */
function session({ high = 64 * MiB, current = 40 * MiB, anonShare = 1, sessions = 2, measure = 'psi', windowMs = 2000, cpuPressure = false } = {}) {
  let s = {
    atMs: 0, currentBytes: current, highBytes: high, maxBytes: Infinity, swapMaxBytes: 0,
    anonBytes: current * anonShare, shmemBytes: 0, fileBytes: current * (1 - anonShare), ownHighEvents: 0,
    pressureFullUs: 0, pressureSomeUs: 0, unitsInSlice: sessions, measure, ...(cpuPressure ? { cpuSomeUs: 0 } : {}),
  };
  return {
    first: () => ({ ...s }),
    /** `cpu`: the share of the window its tasks waited for a CPU (cpu.pressure some), when the session has cpuPressure. */
    next({ share = 0, ownHigh = 0, grow = 0, anon = anonShare, dt = windowMs, cpu = 0 } = {}) {
      const currentBytes = s.currentBytes + grow;
      s = { ...s, atMs: s.atMs + dt, currentBytes, anonBytes: currentBytes * anon, fileBytes: currentBytes * (1 - anon),
        ownHighEvents: s.ownHighEvents + ownHigh, pressureFullUs: s.pressureFullUs + Math.round(share * dt * 1000),
        ...(cpuPressure ? { cpuSomeUs: s.cpuSomeUs + Math.round(cpu * dt * 1000) } : {}) };
      return { ...s };
    },
  };
}

/** Feed samples; return the verdicts. */
function run(samples, config = cfg, state = initialState()) {
  let st = state;
  return samples.map((x) => {
    const [next, v] = step(st, x, config);
    st = next;
    return { ...v, stateAfter: st };
  });
}

test('trip and clear lines: ≥ 0.2 hot, < 0.1 clear, between warm', () => {
  const s = session();
  const a = s.first();
  const kind = (share) => classifyWindow(a, { ...a, atMs: 2000, ownHighEvents: 5, pressureFullUs: share * 2e6 }, cfg).kind;
  assert.equal(kind(0.2), 'hot');
  assert.equal(kind(0.19), 'warm');
  assert.equal(kind(0.1), 'warm');
  assert.equal(kind(0.099), 'clear');
  assert.equal(kind(0.0005), 'clear');
});

test('two hot windows in a row before standing still', () => {
  const s = session();
  const vs = run([s.first(), s.next({ share: 0.6, ownHigh: 50 }), s.next({ share: 0.6, ownHigh: 50 })]);
  assert.equal(vs[1].event, 'window');
  assert.equal(vs[1].state, 'hot');
  assert.equal(vs[2].event, 'standing-still');
});

test('a clear window between two hot ones starts the count over; a warm one does not', () => {
  const s = session();
  const hot = { share: 0.6, ownHigh: 50 };
  const withClear = run([s.first(), s.next(hot), s.next({ share: 0 }), s.next(hot)]);
  assert.deepEqual(withClear.map((v) => v.event), ['first-sample', 'window', 'window', 'window']);
  const t = session();
  const withWarm = run([t.first(), t.next(hot), t.next({ share: 0.15, ownHigh: 5 }), t.next(hot)]);
  assert.equal(withWarm[3].event, 'standing-still');
});

/** Held at its 64 MiB brake (near-own-brake), as a hog waiting for a CPU in bench:storm. */
const AT_BRAKE = 63 * MiB;

test('a window below the clear line that waited for a CPU is no evidence: warm, one in a row; the second clears', () => {
  const hot = { share: 0.6, ownHigh: 50 };
  const starved = { share: 0, cpu: 0.9 };
  const kinds = (vs) => vs.slice(1).map((v) => v.window.kind);
  const a = session({ cpuPressure: true, current: AT_BRAKE });
  const bridged = run([a.first(), a.next(hot), a.next(starved), a.next(hot)]);
  assert.deepEqual(kinds(bridged), ['hot', 'warm', 'hot']);
  assert.equal(bridged[2].window.starved, true);
  assert.equal(bridged[2].window.cpuShare, 0.9);
  assert.match(bridged[2].explain, /waited for a CPU 0\.90 of the window: no evidence/);
  assert.equal(bridged[3].event, 'standing-still', 'the run goes on across it');
  assert.equal(bridged[3].onsetMs, 0, 'from the first hot window');
  // the same window without the wait is clear, as before
  const b = session({ cpuPressure: true, current: AT_BRAKE });
  assert.deepEqual(kinds(run([b.first(), b.next(hot), b.next({ share: 0, cpu: 0.05 }), b.next(hot)])), ['hot', 'clear', 'hot']);
  // two in a row: the second ends the run
  const c = session({ cpuPressure: true, current: AT_BRAKE });
  const twice = run([c.first(), c.next(hot), c.next(starved), c.next(starved), c.next(hot)]);
  assert.deepEqual(kinds(twice), ['hot', 'warm', 'clear', 'hot']);
  assert.match(twice[3].window.reason, /second window in a row: clear$/);
  assert.equal(twice[4].event, 'window', 'a new run of one');
  // and after a clear one, a starved window is bridged again
  const d = session({ cpuPressure: true, current: AT_BRAKE });
  assert.deepEqual(kinds(run([d.first(), d.next(hot), d.next(starved), d.next(starved), d.next(starved), d.next(hot), d.next(hot)])), ['hot', 'warm', 'clear', 'warm', 'hot', 'hot']);
});

test('a CPU-starved window counts only where a stalled one would: the line, the anon fuse, own evidence, cpu.pressure read', () => {
  const a = session({ cpuPressure: true, current: AT_BRAKE });
  const first = a.first();
  const at = (cpu) => classifyWindow(first, { ...first, atMs: 2000, ownHighEvents: 5, cpuSomeUs: cpu * 2e6 }, cfg); // own-high-moved
  assert.equal(at(cfg.cpuStarvedShare).kind, 'warm');
  assert.equal(at(cfg.cpuStarvedShare - 0.01).kind, 'clear');
  assert.equal(cfg.cpuStarvedShare, 0.5);
  const starved = { share: 0, cpu: 0.9, ownHigh: 5 };
  const cache = session({ cpuPressure: true, anonShare: 0.5 });
  assert.equal(run([cache.first(), cache.next(starved)])[1].window.kind, 'clear', 'page cache');
  const neighbour = session({ cpuPressure: true, current: 10 * MiB, sessions: 3 });
  assert.equal(run([neighbour.first(), neighbour.next({ share: 0, cpu: 0.9 })])[1].window.kind, 'clear', 'not its own brake');
  const noFile = session();
  const v = run([noFile.first(), noFile.next(starved)])[1].window;
  assert.equal(v.kind, 'clear', 'without cpu.pressure (a trace, no PSI) as before');
  assert.equal('cpuShare' in v, false);
  // a configured line
  const strict = { ...cfg, cpuStarvedShare: 0.95 };
  assert.equal(classifyWindow(first, { ...first, atMs: 2000, ownHighEvents: 5, cpuSomeUs: 0.9 * 2e6 }, strict).kind, 'clear');
});

test('a CPU-starved window keeps a running deadline once; the second in a row ends it', () => {
  const hot = { share: 0.6, ownHigh: 50 };
  const starved = { share: 0, cpu: 0.8 };
  const s = session({ cpuPressure: true, current: AT_BRAKE });
  const vs = run([s.first(), s.next(hot), s.next(hot), s.next(starved), s.next(hot), s.next(starved), s.next(starved)]);
  assert.equal(vs[2].event, 'standing-still');
  assert.deepEqual(vs.slice(3).map((v) => v.event), ['window', 'window', 'window', 'cleared']);
  assert.equal(vs[5].state, 'standing-still');
});

test('the anon fuse: pressure while grinding page cache is clear', () => {
  const s = session({ anonShare: 0.5 });
  const vs = run([s.first(), s.next({ share: 0.8, ownHigh: 100 }), s.next({ share: 0.8, ownHigh: 100 })]);
  assert.deepEqual(vs.map((v) => v.window?.kind), [undefined, 'clear', 'clear']);
  assert.equal(vs[2].state, 'clear');
  // at the fuse line itself it counts
  const t = session({ anonShare: 0.9 });
  assert.equal(run([t.first(), t.next({ share: 0.8, ownHigh: 1 })])[1].window.kind, 'hot');
});

test('its own doing: without own evidence a stalled window is clear; each kind of evidence makes it count', () => {
  const far = 10 * MiB; // far below its 64 MiB brake
  const stalled = { share: 0.8 };
  const neighbour = session({ current: far, sessions: 3 });
  assert.equal(run([neighbour.first(), neighbour.next(stalled)])[1].window.kind, 'clear');
  const ownHigh = session({ current: far, sessions: 3 });
  assert.deepEqual(run([ownHigh.first(), ownHigh.next({ ...stalled, ownHigh: 1 })])[1].window.evidence, ['own-high-moved']);
  const near = session({ current: 0.96 * 64 * MiB, sessions: 3 });
  assert.deepEqual(run([near.first(), near.next(stalled)])[1].window.evidence, ['near-own-brake']);
  const alone = session({ current: far, sessions: 1 });
  assert.deepEqual(run([alone.first(), alone.next(stalled)])[1].window.evidence, ['alone-in-slice']);
});

test('the deadline: grace after standing still, doubled on the fallback measure, then expired', () => {
  const s = session();
  const hot = { share: 0.6, ownHigh: 50 };
  const vs = run([s.first(), s.next(hot), s.next(hot)]);
  assert.equal(vs[2].deadlineRemainingMs, 180_000);
  const f = session({ measure: 'fallback' });
  const fv = run([f.first(), f.next({ ownHigh: 50 }), f.next({ ownHigh: 50 })]);
  assert.equal(fv[2].event, 'standing-still');
  assert.equal(fv[2].deadlineRemainingMs, 360_000);
  // expire: keep hot windows coming past the grace
  const samples = [s.first()];
  for (let i = 0; i < 100; i++) samples.push(s.next(hot));
  const all = run(samples);
  const start = all.findIndex((v) => v.event === 'standing-still');
  const end = all.findIndex((v) => v.event === 'deadline-expired');
  assert.equal((end - start) * 2000, 180_000);
});

test('progress clears: a 64 MiB drop since the deadline started ends it; output does not count', () => {
  const s = session({ current: 200 * MiB, high: 210 * MiB });
  const hot = { share: 0.6, ownHigh: 50 };
  const vs = run([s.first(), s.next(hot), s.next(hot), s.next({ ...hot, grow: -63 * MiB }), s.next({ ...hot, grow: -1 * MiB })]);
  assert.equal(vs[2].event, 'standing-still');
  assert.equal(vs[3].event, 'window', '63 MiB is not yet progress');
  assert.equal(vs[4].event, 'progress');
  assert.equal(vs[4].stateAfter.deadline, undefined);
});

test('a clear window ends standing still; a warm one does not', () => {
  const s = session();
  const hot = { share: 0.6, ownHigh: 50 };
  const vs = run([s.first(), s.next(hot), s.next(hot), s.next({ share: 0.15, ownHigh: 2 }), s.next({ share: 0.01 })]);
  assert.equal(vs[3].state, 'standing-still');
  assert.equal(vs[4].event, 'cleared');
  assert.equal(vs[4].state, 'clear');
});

test('mute after our own lowering: 240 s in which no window counts', () => {
  const s = session();
  const hot = { share: 0.6, ownHigh: 50 };
  const first = s.first();
  const muted = muteAfterLowering(run([first])[0].stateAfter, first.atMs, cfg);
  const samples = [];
  for (let i = 0; i < 122; i++) samples.push(s.next(hot));
  const vs = run(samples, cfg, muted);
  const firstStill = vs.findIndex((v) => v.event === 'standing-still');
  assert.ok(vs.slice(0, 119).every((v) => v.event === 'muted'), 'muted for 240 s');
  assert.equal(firstStill, 120, 'two hot windows after the mute ends');
});

test('new cgroup, fresh start: counters that go backwards drop the episode', () => {
  const s = session();
  const hot = { share: 0.6, ownHigh: 50 };
  const vs = run([s.first(), s.next(hot), s.next(hot)]);
  const reborn = { ...s.next(hot), pressureFullUs: 10, ownHighEvents: 0 };
  const [after, v] = step(vs[2].stateAfter, reborn, cfg);
  assert.equal(v.event, 'new-cgroup');
  assert.equal(after.deadline, undefined);
  assert.equal(after.hotWindows, 0);
  assert.equal(after.last, reborn);
});

test('a window shorter than half the nominal one is noise: the old sample stays', () => {
  const s = session();
  const a = s.first();
  const [st] = step(initialState(), a, cfg);
  const short = s.next({ share: 0.9, ownHigh: 5, dt: 999 });
  const [after, v] = step(st, short, cfg);
  assert.equal(v.event, 'short-window');
  assert.equal(after.last, a);
  const ok = s.next({ share: 0.9, ownHigh: 5, dt: 1000 });
  assert.equal(step(after, ok, cfg)[1].event, 'window');
});

test('fallback without PSI: hot when the brake fired and it did not grow; clear when it grew', () => {
  const s = session({ measure: 'fallback', high: 4096 * MiB }); // 1 % of 4 GiB > 16 MiB: the cap applies
  const a = s.first();
  const grew = (bytes, ownHigh = 10, anon = 1) => classifyWindow(a, { ...a, atMs: 5000, ownHighEvents: ownHigh, currentBytes: a.currentBytes + bytes, anonBytes: (a.currentBytes + bytes) * anon }, cfg).kind;
  assert.equal(grew(16 * MiB - 1), 'hot');
  assert.equal(grew(16 * MiB), 'clear');
  assert.equal(grew(0, 0), 'warm', 'the brake did not fire, yet it did not grow either: neither hot nor clear');
  assert.equal(grew(16 * MiB, 0), 'clear', 'grew: clear, whether or not the brake fired');
  assert.equal(grew(0, 10, 0.5), 'clear', 'the anon fuse holds here too');
  const small = session({ measure: 'fallback', high: 64 * MiB }); // 1 % of 64 MiB < 16 MiB
  const b = small.first();
  assert.equal(classifyWindow(b, { ...b, atMs: 5000, ownHighEvents: 3, currentBytes: b.currentBytes + 0.01 * 64 * MiB }, cfg).kind, 'clear');
});

test('fallback without PSI: a warm window keeps a running deadline; only growth clears it', () => {
  // design.md §4: on the fallback "clear when it grew more"; a window in which the brake did not
  // fire and nothing grew is warm, and warm neither starts nor ends anything.
  const f = session({ measure: 'fallback' });
  const vs = run([f.first(), f.next({ ownHigh: 50 }), f.next({ ownHigh: 50 }), f.next({ ownHigh: 0 }), f.next({ ownHigh: 0, grow: 16 * MiB })]);
  assert.equal(vs[2].event, 'standing-still');
  assert.equal(vs[3].window?.kind, 'warm');
  assert.equal(vs[3].event, 'window', 'a warm window does not end the deadline');
  assert.equal(vs[3].state, 'standing-still');
  assert.equal(vs[3].deadlineRemainingMs, 360_000 - 2000);
  assert.equal(vs[4].event, 'cleared', 'growth does');
});

test('resetEpisode after an action starts the count over', () => {
  const s = session();
  const hot = { share: 0.6, ownHigh: 50 };
  const vs = run([s.first(), s.next(hot), s.next(hot)]);
  const reset = resetEpisode(vs[2].stateAfter);
  assert.equal(reset.deadline, undefined);
  assert.equal(reset.hotWindows, 0);
});

test('property: without own evidence no sequence of windows ever stands still', () => {
  fc.assert(fc.property(fc.array(fc.record({ share: fc.double({ min: 0, max: 1, noNaN: true }), grow: fc.integer({ min: -MiB, max: MiB }) }), { maxLength: 60 }), (windows) => {
    const s = session({ current: 10 * MiB, sessions: 4 });
    return run([s.first(), ...windows.map((w) => s.next(w))]).every((v) => v.state !== 'standing-still');
  }));
});

test('property: every verdict explains itself with the figures that decided', () => {
  fc.assert(fc.property(fc.array(fc.record({ share: fc.double({ min: 0, max: 1, noNaN: true }), ownHigh: fc.nat(100) }), { minLength: 1, maxLength: 30 }), (windows) => {
    const s = session();
    const vs = run([s.first(), ...windows.map((w) => s.next(w))]);
    return vs.slice(1).every((v) => v.window !== undefined && v.explain.includes(`share ${v.window.share.toFixed(2)}`) && v.explain.includes('hot windows'));
  }));
});

test("the episode's onset: where the run's first hot window began, told with the standing-still verdict (issue 14's onset-to-verdict histogram)", () => {
  const s = session();
  // a warm window (0-2000 ms), then hot ones from 2000: the onset is 2000, the verdict at 6000
  const vs = run([s.first(), s.next({ share: 0.15, ownHigh: 5 }), s.next({ share: 0.6, ownHigh: 50 }), s.next({ share: 0.6, ownHigh: 50 })]);
  assert.equal(vs[2].stateAfter.onsetMs, 2000, 'the first hot window began at the sample before it');
  assert.equal(vs[3].event, 'standing-still');
  assert.equal(vs[3].onsetMs, 2000);
  assert.equal(vs[3].stateAfter.last.atMs - vs[3].onsetMs, 4000, 'two windows from onset to verdict');
  // a clear window ends the run: the next run's onset is its own
  const t = session();
  const ws = run([t.first(), t.next({ share: 0.6, ownHigh: 50 }), t.next({ share: 0 }), t.next({ share: 0.6, ownHigh: 50 }), t.next({ share: 0.6, ownHigh: 50 })]);
  assert.equal(ws[2].stateAfter.onsetMs, undefined, 'cleared: no onset');
  assert.equal(ws[4].event, 'standing-still');
  assert.equal(ws[4].onsetMs, 4000);
  assert.equal(resetEpisode(ws[4].stateAfter).onsetMs, undefined, 'a raise or a stop starts the next episode afresh');
  assert.equal(muteAfterLowering(ws[4].stateAfter, 0, cfg).onsetMs, undefined);
  assert.equal(vs[1].onsetMs, undefined, 'only a standing-still verdict carries it');
});

test("a verdict's words are those of its own step, read however late (they are written when first read)", () => {
  const s = session();
  let st = initialState();
  [st] = step(st, s.first(), cfg);
  const [afterFirst, first] = step(st, s.next({ share: 0.6, ownHigh: 5 }), cfg);
  const [, second] = step(afterFirst, s.next({ share: 0.6, ownHigh: 5 }), cfg);
  assert.equal(second.event, 'standing-still');
  assert.match(first.explain, /^window; hot: share 0\.60 at or above 0\.2; .*hot windows 1$/, 'the first step\'s count, read after the second step');
  assert.match(second.explain, /hot windows 2; deadline in 180 s$/);
  assert.equal(JSON.parse(JSON.stringify(first)).explain, first.explain, 'written out with the verdict, its getter read');
});

test('a run whose cadence turns from onset windows to steady ones stands still on a hot window only (session 18)', () => {
  const s = session();
  const onset = (x) => ({ ...x, cadence: 'onset' });
  const steady = (x) => ({ ...x, cadence: 'steady' });
  // two hot onset windows (a count of two, under the onset's three), then sbd falls behind and the
  // feed takes steady windows, whose count is two
  const vs = run([s.first(), onset(s.next({ share: 0.6, ownHigh: 5, dt: 500 })), onset(s.next({ share: 0.6, ownHigh: 5, dt: 500 })),
    steady(s.next({ share: 0.15, ownHigh: 5, dt: 2000 })), steady(s.next({ share: 0.6, ownHigh: 5, dt: 2000 }))]);
  assert.deepEqual(vs.slice(1, 3).map((v) => v.state), ['hot', 'hot']);
  assert.equal(vs[3].window.kind, 'warm');
  assert.equal(vs[3].event, 'window', 'a warm window, whatever the count: not standing still');
  assert.equal(vs[4].event, 'standing-still', 'the next hot one, the third of the run');
});

test('near MemoryMax: over its brake with less than nearMemoryMax left, a deadline ends at once', () => {
  const MAX = 768 * MiB;
  const s = session({ current: 640 * MiB, high: 640 * MiB });
  const first = { ...s.first(), maxBytes: MAX };
  const next = (o) => ({ ...s.next(o), maxBytes: MAX });
  const hot = { share: 0.6, ownHigh: 50 };
  const vs = run([first, next(hot), next(hot), next({ ...hot, grow: 60 * MiB }), next({ ...hot, grow: 5 * MiB }), next(hot)]);
  assert.equal(vs[2].event, 'standing-still');
  assert.equal(vs[3].event, 'window', '700 MiB: 68 MiB left, the grace runs');
  assert.equal(vs[4].event, 'near-memory-max', '705 MiB: 63 MiB left, 65 MiB over the brake');
  assert.ok(vs[4].deadlineRemainingMs > 170_000, 'long before the grace ends');
  assert.equal(vs[5].event, 'near-memory-max', 'and again while it stays there');
  // the wall outranks a clear window
  const c = run([first, next(hot), next(hot), next({ share: 0, grow: 65 * MiB })]);
  assert.equal(c[3].event, 'near-memory-max');
});

test('near MemoryMax: never without a MemoryMax, nor at or under the brake, nor with no deadline', () => {
  const hot = { share: 0.6, ownHigh: 50 };
  const noMax = session({ current: 700 * MiB, high: 640 * MiB });
  assert.ok(!run([noMax.first(), noMax.next(hot), noMax.next(hot), noMax.next(hot)]).some((v) => v.event === 'near-memory-max'), 'no MemoryMax: the grace runs');
  // a brake set by hand 32 MiB under MemoryMax, holding: not over it
  const s = session({ current: 736 * MiB, high: 736 * MiB });
  const withMax = (x) => ({ ...x, maxBytes: 768 * MiB });
  const held = run([withMax(s.first()), withMax(s.next(hot)), withMax(s.next(hot)), withMax(s.next(hot))]);
  assert.deepEqual(held.map((v) => v.event), ['first-sample', 'window', 'standing-still', 'window']);
  // no deadline (one hot window, then warm): the rule is the deadline's, it starts nothing
  const t = session({ current: 720 * MiB, high: 640 * MiB });
  const early = run([withMax(t.first()), withMax(t.next(hot)), withMax(t.next({ share: 0.15 }))]);
  assert.deepEqual(early.map((v) => v.event), ['first-sample', 'window', 'window']);
});
