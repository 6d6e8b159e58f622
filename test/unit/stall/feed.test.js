// @ts-check
'use strict';
// The feed's sampling discipline over a fake cgroup directory: asleep until woken, one window
// per sample while not clear, asleep again once clear; the timer without PSI, saying why.
const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { SessionFeed, cadenceUnderLoad, inHotRun, LATE_WINDOWS_UNDER_LOAD, FILES_LINGER_MS, DEADLINE_WINDOWS_STRETCH_UNDER_LOAD, windowPeriodMs, AwakeFeeds, AWAKE_FEEDS_OF_A_STORM } = require('../../../dist/stall/feed.js');
const { SampleFiles, CgroupGoneError } = require('../../../dist/cgroup/read.js');
const { writeScopeFiles } = require('../../support/fake-cgroup');
const { parseConfig } = require('../../../dist/config/load.js');

const cfg = parseConfig({}, 'defaults').detector;
const MiB = 2 ** 20;

/** A fake scope directory whose figures the test sets before each sample. */
function fakeCgroup({ pressure = true } = {}) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sb-feed-'));
  const set = (/** @type {{fullUs?: number, ownHigh?: number, current?: number}} */ f) => writeScopeFiles(dir, { ...f, pressure });
  set({});
  return { dir, set };
}

/**
 * The sample files as kernfs keeps them: a read through a file held open after its cgroup was
 * removed fails ENODEV (a removed tmp directory's files would still read). Counts what is open.
 */
function kernfsLikeFiles(open) {
  return (dir) => {
    const files = SampleFiles.open(dir);
    open.n++;
    return {
      read: (atMs) => {
        if (!fs.existsSync(dir)) throw new CgroupGoneError(dir);
        return files.read(atMs);
      },
      textOf: (name) => {
        if (!fs.existsSync(dir)) throw new CgroupGoneError(dir);
        return files.textOf(name);
      },
      close: () => {
        files.close();
        open.n--;
      },
    };
  };
}

function feedOn(dir, clock, open = { n: 0 }, samples = [], awake = undefined) {
  const verdicts = [];
  const logs = [];
  const trigger = { spec: undefined, fire: () => {}, gone: () => {}, closed: false };
  const feed = new SessionFeed(dir, {
    openFiles: kernfsLikeFiles(open),
    armTrigger: (file, spec, cb) => {
      if (!fs.existsSync(file)) throw Object.assign(new Error(`open ${file}: ENOENT`), { code: 'ENOENT' });
      trigger.spec = spec;
      trigger.fire = () => cb('fired');
      trigger.gone = () => cb('gone');
      return { close: () => { trigger.closed = true; }, unref: () => {} };
    },
    config: cfg,
    unitsInSlice: () => 2,
    onVerdict: (v) => verdicts.push(v),
    onSample: (raw) => samples.push({ raw, verdictsBefore: verdicts.length }),
    onGone: () => verdicts.push({ event: 'gone' }),
    log: (msg, fields) => logs.push({ msg, ...fields }),
    now: () => clock.t,
    awake,
  });
  return { feed, verdicts, logs, trigger };
}

test('every sample is handed to onSample as read, before its verdict (the OOM watch takes its oom_kill)', () => {
  const cg = fakeCgroup();
  const clock = { t: 0 };
  const samples = [];
  const { feed, verdicts, trigger } = feedOn(cg.dir, clock, { n: 0 }, samples);
  feed.start();
  trigger.fire();
  cg.set({ fullUs: 1_200_000, ownHigh: 50 });
  clock.t = 2000;
  feed.sample();
  assert.equal(samples.length, 2);
  assert.deepEqual(samples.map((s) => [s.raw.atMs, s.raw.ownHighEvents, s.raw.oomKills, s.verdictsBefore]), [[0, 0, 0, 0], [2000, 50, 0, 1]]);
  assert.equal(verdicts.length, 2);
  feed.stop();
});

test('asleep until woken; windows while not clear; asleep again once clear', (t) => {
  t.mock.timers.enable({ apis: ['setTimeout'] });
  const cg = fakeCgroup();
  const clock = { t: 0 };
  const open = { n: 0 };
  const { feed, verdicts, trigger } = feedOn(cg.dir, clock, open);
  feed.start();
  assert.equal(feed.mode, 'psi');
  assert.deepEqual(trigger.spec, { kind: 'full', stallUs: 200_000, windowUs: 2_000_000 }, 'below the trip line: full 0.1 of a 2 s window');
  assert.equal(feed.sampling, false, 'an idle session costs nothing');
  assert.equal(open.n, 0, 'asleep: no sample file held open');
  trigger.fire();
  assert.equal(feed.sampling, true);
  assert.equal(open.n, 1, 'awake: its sample files held open');
  assert.equal(verdicts.at(-1).event, 'first-sample');
  cg.set({ fullUs: 1_200_000, ownHigh: 50 });
  clock.t = 2000;
  assert.equal(feed.sample()?.window?.kind, 'hot');
  assert.equal(feed.sampling, true, 'not clear: keeps taking windows');
  cg.set({ fullUs: 1_200_000, ownHigh: 50 });
  clock.t = 4000;
  assert.equal(feed.sample()?.window?.kind, 'clear');
  assert.equal(feed.sampling, false, 'clear: back to sleep');
  assert.equal(open.n, 1, 'asleep: its sample files kept open a while, for a wake that comes soon');
  assert.equal(feed.state.last, undefined, 'the next wake starts from a fresh sample');
  t.mock.timers.tick(FILES_LINGER_MS);
  assert.equal(open.n, 0, 'asleep for FILES_LINGER_MS: its sample files closed');
  assert.equal(feed.holdsFiles, false);
  feed.stop();
  assert.equal(trigger.closed, true);
});

test('a wake within FILES_LINGER_MS of the sleep reads the files still open; stop closes them', (t) => {
  t.mock.timers.enable({ apis: ['setTimeout'] });
  const cg = fakeCgroup();
  const clock = { t: 0 };
  const open = { n: 0 };
  let opened = 0;
  const { feed, trigger } = feedOn(cg.dir, clock, { get n() { return open.n; }, set n(v) { if (v > open.n) opened++; open.n = v; } });
  feed.start();
  trigger.fire();
  clock.t = 2000;
  feed.sample(); // clear: asleep
  assert.equal(feed.sampling, false);
  t.mock.timers.tick(FILES_LINGER_MS - 1);
  clock.t = 4500;
  trigger.fire();
  assert.equal(feed.sampling, true);
  assert.equal(opened, 1, 'woken within the linger: not opened again');
  assert.match(feed.heldText('memory.events.local') ?? '', /^low \d+\nhigh \d+/m, 'a held file read through its fd (the OOM watch)');
  t.mock.timers.tick(FILES_LINGER_MS);
  assert.equal(open.n, 1, "awake: the linger's close was cancelled");
  clock.t = 6500;
  feed.sample(); // clear: asleep again
  feed.stop();
  assert.equal(open.n, 0, 'stopped while lingering: closed at once');
  assert.equal(feed.heldText('memory.events.local'), undefined, 'nothing held: the caller reads by path');
  t.mock.timers.tick(FILES_LINGER_MS);
  assert.equal(open.n, 0);
});

test('the wake is ignored while sampling, and a vanished cgroup ends the feed', () => {
  const cg = fakeCgroup();
  const clock = { t: 0 };
  const { feed, verdicts } = feedOn(cg.dir, clock);
  feed.start();
  feed.wake('a');
  feed.wake('b');
  assert.equal(verdicts.length, 1);
  fs.rmSync(cg.dir, { recursive: true });
  clock.t = 2000;
  assert.equal(feed.sample(), undefined);
  assert.equal(verdicts.at(-1).event, 'gone');
  assert.equal(feed.sampling, false);
});

test('without PSI the session is sampled on a timer, and the feed says why', () => {
  const cg = fakeCgroup({ pressure: false });
  const { feed, logs } = feedOn(cg.dir, { t: 0 });
  feed.start();
  assert.equal(feed.mode, 'timer');
  assert.equal(feed.sampling, true);
  assert.match(feed.fallbackReason ?? '', /no memory.pressure here/);
  assert.ok(logs.some((l) => /sampling on a timer/.test(l.msg)));
  feed.stop();
  assert.equal(feed.sampling, false);
});

test('without PSI each timer sample steps the fallback measure; the session stays watched', () => {
  // booted psi=0: the first sample used to read memory.pressure, find it missing and end the feed
  const cg = fakeCgroup({ pressure: false });
  const clock = { t: 0 };
  const { feed, verdicts } = feedOn(cg.dir, clock);
  feed.start();
  assert.equal(feed.describe(), 'sampling (no PSI)');
  feed.sample(); // what the timer does every fallbackIntervalS
  assert.equal(verdicts.at(-1)?.event, 'first-sample');
  for (let i = 1; i <= 2; i++) {
    cg.set({ ownHigh: 50 * i });
    clock.t = i * 5000;
    feed.sample();
  }
  assert.ok(!verdicts.some((v) => v.event === 'gone'), 'not taken for a vanished cgroup');
  assert.equal(verdicts.at(-1)?.event, 'standing-still', 'the fallback rules are reached');
  assert.equal(verdicts.at(-1)?.deadlineRemainingMs, 2 * cfg.graceS * 1000, 'with the doubled grace');
  assert.equal(feed.sampling, true);
  feed.stop();
});

test('describe(): psi with a trigger; "no PSI trigger" when PSI is there but no trigger could be armed', () => {
  const cg = fakeCgroup();
  const { feed } = feedOn(cg.dir, { t: 0 });
  feed.start();
  assert.equal(feed.describe(), 'psi');
  feed.stop();
  const refused = new SessionFeed(cg.dir, {
    armTrigger: () => { throw Object.assign(new Error('write: EINVAL'), { code: 'EINVAL' }); },
    config: cfg, unitsInSlice: () => 2, onVerdict: () => {}, onGone: () => {}, log: () => {}, now: () => 0,
  });
  refused.start();
  assert.equal(refused.describe(), 'sampling (no PSI trigger)');
  refused.stop();
});

test("the PSI trigger's POLLERR ('gone': the cgroup was removed) ends the feed and says so at once", () => {
  const cg = fakeCgroup();
  const { feed, verdicts, trigger } = feedOn(cg.dir, { t: 0 });
  feed.start();
  trigger.fire();
  assert.equal(feed.sampling, true);
  trigger.gone();
  assert.equal(verdicts.at(-1)?.event, 'gone', 'told without waiting for a sample to fail');
  assert.equal(feed.sampling, false);
  assert.equal(trigger.closed, true);
});

test('woken by PSI it takes 0.5 s onset windows; a running deadline takes 2 s ones; after an action, short again', () => {
  const cg = fakeCgroup();
  const clock = { t: 0 };
  const { feed, verdicts, trigger } = feedOn(cg.dir, clock);
  feed.start();
  assert.equal(feed.windowMs, 0, 'asleep');
  trigger.fire();
  assert.equal(feed.windowMs, cfg.onsetWindowS * 1000);
  for (let i = 1; i <= cfg.onsetHotWindows; i++) {
    cg.set({ fullUs: i * 400_000, ownHigh: 10 * i, current: 64 * MiB });
    clock.t = i * 500;
    feed.sample();
  }
  assert.equal(verdicts.at(-1).event, 'standing-still', `${cfg.onsetHotWindows} hot onset windows`);
  assert.equal(verdicts.at(-1).onsetMs, 0);
  assert.equal(feed.windowMs, cfg.windowS * 1000, 'the deadline is judged on steady windows');
  // the next sample, half an onset window on, is a short window for the steady cadence: kept
  cg.set({ fullUs: 1_600_000, ownHigh: 40, current: 64 * MiB });
  clock.t = 2000;
  assert.equal(feed.sample()?.event, 'short-window');
  feed.setState({ ...feed.state, deadline: undefined, hotWindows: 0, onsetMs: undefined });
  assert.equal(feed.windowMs, cfg.onsetWindowS * 1000, 'a new episode starts at the onset cadence');
  feed.stop();
  assert.equal(feed.windowMs, 0);
});

test('the own-brake hint wakes the feed at most once per two onset windows (1 s); the trigger itself is not paced', () => {
  const { hintPaceMs } = require('../../../dist/stall/detector.js');
  assert.equal(hintPaceMs(cfg), 1000, 'two 0.5 s onset windows');
  assert.equal(hintPaceMs({ onsetWindowS: 2, windowS: 2 }), 2000, 'the seed design (2 s windows): capped at a window');
  const cg = fakeCgroup();
  const clock = { t: 0 };
  const { feed, trigger, logs, verdicts } = feedOn(cg.dir, clock);
  feed.start();
  feed.hint('own brake fired');
  assert.equal(feed.sampling, true, 'the first hint wakes it');
  clock.t = 500;
  assert.equal(feed.sample()?.window?.kind, 'clear');
  assert.equal(feed.sampling, false, 'clear (page cache, say): asleep');
  clock.t = 900;
  feed.hint('own brake fired');
  assert.equal(feed.sampling, false, 'a second hint within 1 s of the first is ignored');
  clock.t = 1000;
  const before = verdicts.length;
  feed.hint('own brake fired');
  assert.equal(logs.filter((l) => l.msg === 'waking').length, 2, 'a hint 1 s after the last one wakes it');
  assert.deepEqual(verdicts.slice(before).map((v) => [v.event, v.window?.windowMs]), [['window', 500]], 'its sample ends the window begun before the short sleep');
  assert.equal(feed.sampling, false, 'clear: asleep again at once');
  clock.t = 1600;
  trigger.fire();
  assert.equal(feed.sampling, true, 'the trigger wakes it whenever the kernel fires it');
  for (const t of [2100, 2600, 3100, 3600]) {
    clock.t = t;
    feed.sample();
  }
  assert.equal(feed.sampling, false, 'clear windows for the 2 s the trigger was muted, then asleep');
  feed.hint('own brake fired');
  assert.equal(feed.sampling, true, 'a hint long after the last one wakes it');
  assert.equal(logs.filter((l) => l.msg === 'waking').length, 4);
  feed.stop();
});

test('a clear onset window does not put the feed to sleep when the trigger fired during it (the kernel fires once per 2 s window)', () => {
  const cg = fakeCgroup();
  const clock = { t: 0 };
  const { feed, trigger } = feedOn(cg.dir, clock);
  feed.start();
  feed.hint('own brake fired'); // the brake fired before the stall began
  clock.t = 300;
  trigger.fire(); // the stall begins late in the window: ignored as a wake (already sampling), but noted
  clock.t = 500;
  assert.equal(feed.sample()?.window?.kind, 'clear', 'too little of the window stalled');
  assert.equal(feed.sampling, true, 'awake: the trigger will not fire again for 2 s');
  cg.set({ fullUs: 450_000, ownHigh: 10, current: 64 * MiB });
  clock.t = 1000;
  assert.equal(feed.sample()?.window?.kind, 'hot');
  cg.set({ fullUs: 450_000, ownHigh: 10, current: 64 * MiB });
  clock.t = 1500;
  assert.equal(feed.sample()?.window?.kind, 'clear');
  assert.equal(feed.sampling, true, 'clear with no trigger in the window, but 1.2 s after it fired: it cannot fire again yet, awake');
  clock.t = 2000;
  assert.equal(feed.sample()?.window?.kind, 'clear');
  assert.equal(feed.sampling, true, '1.7 s after it fired: awake');
  clock.t = 2500;
  assert.equal(feed.sample()?.window?.kind, 'clear');
  assert.equal(feed.sampling, false, "clear, and the trigger's 2 s window since it fired has passed: asleep");
  feed.stop();
});

test('woken by its trigger, a clear window keeps the feed awake until the trigger could fire again (the quiet-host bench:detect)', () => {
  const cg = fakeCgroup();
  const clock = { t: 0 };
  const { feed, trigger } = feedOn(cg.dir, clock);
  feed.start();
  clock.t = 100;
  trigger.fire(); // the ramp's first stall: the kernel will not fire again before 2,100 ms
  for (const t of [600, 1100, 1600]) {
    clock.t = t;
    assert.equal(feed.sample()?.window?.kind, 'clear');
    assert.equal(feed.sampling, true, `${t} ms: awake, the trigger muted until 2,100 ms`);
  }
  cg.set({ fullUs: 300_000, ownHigh: 10, current: 64 * MiB }); // the stall began at 1,600 ms
  clock.t = 2100;
  assert.equal(feed.sample()?.window?.kind, 'hot', 'seen in the first window after it began, not when the trigger could next fire');
  feed.stop();
});

test('an awake feed that cannot open its sample files (out of open files) reads them by path, and says so once', () => {
  const cg = fakeCgroup();
  const clock = { t: 0 };
  const verdicts = [];
  const logs = [];
  let cb = () => {};
  const feed = new SessionFeed(cg.dir, {
    armTrigger: (_f, _s, onEvent) => { cb = onEvent; return { close: () => {}, unref: () => {} }; },
    openFiles: () => { throw Object.assign(new Error('open: EMFILE'), { code: 'EMFILE' }); },
    config: cfg, unitsInSlice: () => 2, onVerdict: (v) => verdicts.push(v), onGone: () => verdicts.push({ event: 'gone' }),
    log: (msg, fields) => logs.push({ msg, ...fields }), now: () => clock.t,
  });
  feed.start();
  cb('fired');
  assert.equal(verdicts.at(-1).event, 'first-sample');
  cg.set({ fullUs: 1_200_000, ownHigh: 50 });
  clock.t = 2000;
  assert.equal(feed.sample()?.window?.kind, 'hot', 'sampled by path');
  assert.equal(logs.filter((l) => /cannot hold the sample files open/.test(l.msg)).length, 1);
  feed.stop();
});

test('cadenceUnderLoad: onset windows fall back to steady ones once two windows in a row came late', () => {
  assert.equal(LATE_WINDOWS_UNDER_LOAD, 2);
  assert.equal(cadenceUnderLoad('onset', 0), 'onset');
  assert.equal(cadenceUnderLoad('onset', 1), 'onset', 'one late window: a hiccup, still onset');
  assert.equal(cadenceUnderLoad('onset', 2), 'steady');
  assert.equal(cadenceUnderLoad('steady', 0), 'steady', 'a deadline runs steady windows anyway');
  assert.equal(cadenceUnderLoad('onset', 2, true), 'onset', 'a run of hot windows goes on: onset windows, however late');
  assert.equal(cadenceUnderLoad('steady', 2, true), 'steady', 'a deadline runs steady windows anyway');
  assert.equal(inHotRun({ hotWindows: 2, lastWindow: { kind: 'hot' } }), true);
  assert.equal(inHotRun({ hotWindows: 2, lastWindow: { kind: 'warm' } }), false, 'a warm window does not end the run, but does not carry it on');
  assert.equal(inHotRun({ hotWindows: 0, lastWindow: { kind: 'hot' } }), false, 'muted: a hot window that counts for nothing');
  assert.equal(inHotRun({ hotWindows: 0, lastWindow: undefined }), false);
});

test('a feed whose windows come late while hot keeps onset windows and stands still on the third hot one (session 17\'s storm)', () => {
  const cg = fakeCgroup();
  const clock = { t: 0 };
  const { feed, trigger } = feedOn(cg.dir, clock);
  const onsetMs = cfg.onsetWindowS * 1000;
  feed.start();
  trigger.fire();
  let full = 0;
  const late = (share) => {
    clock.t += onsetMs * 2 + 100;
    full += (onsetMs * 2 + 100) * 1000 * share;
    cg.set({ fullUs: Math.round(full), ownHigh: 50 + clock.t });
    return feed.sample();
  };
  // 0.5 of 1.1 s: 1.1 s of stall in two windows, below the 1.2 s that on-time windows always catch (lateRunStandsStill)
  assert.equal(late(0.5)?.window?.kind, 'hot');
  assert.equal(late(0.5)?.window?.kind, 'hot');
  assert.equal(feed.windowMs, onsetMs, 'two late windows in a row, both hot: onset windows still (before: a steady one, 2 s more)');
  const v = late(0.5);
  assert.equal(v?.event, 'standing-still', 'the third hot onset window, late as the others, stands still');
  assert.equal(v?.window?.windowMs, onsetMs * 2 + 100, 'judged over its own length');
  feed.stop();
});

test('a feed whose late windows each hold most of their length in stall stands still on the second (bench:storm\'s slowest)', () => {
  const cg = fakeCgroup();
  const clock = { t: 0 };
  const { feed, trigger } = feedOn(cg.dir, clock);
  const lateMs = cfg.onsetWindowS * 1000 * 2 + 100;
  feed.start();
  trigger.fire();
  let full = 0;
  const late = (share) => {
    clock.t += lateMs;
    full += lateMs * 1000 * share;
    cg.set({ fullUs: Math.round(full), ownHigh: 50 + clock.t });
    return feed.sample();
  };
  assert.equal(late(0.9)?.event, 'window', 'one hot window is never a stall, however long');
  const v = late(0.9);
  assert.equal(v?.event, 'standing-still', '1.98 s of full stall in two hot windows: a stall three on-time windows always catch');
  assert.equal(v?.onsetMs, 0, 'the onset is the wake');
  feed.stop();
});

test('a feed whose windows come late takes steady windows until one comes on time, and tells the detector which', () => {
  const cg = fakeCgroup();
  const clock = { t: 0 };
  const { feed, trigger } = feedOn(cg.dir, clock);
  const onsetMs = cfg.onsetWindowS * 1000;
  const steadyMs = cfg.windowS * 1000;
  feed.start();
  trigger.fire();
  assert.equal(feed.windowMs, onsetMs, 'woken: onset windows');
  let full = 0;
  const stall = (ms, share) => { full += ms * 1000 * share; cg.set({ fullUs: Math.round(full), ownHigh: 50 + clock.t }); };
  const hot = (ms) => stall(ms, 0.9);
  // one hot onset window on time: a run of one
  clock.t += onsetMs;
  hot(onsetMs);
  assert.equal(feed.sample()?.window?.kind, 'hot');
  // then warm windows that came late by more than an onset window (sbd busy with a storm)
  clock.t += onsetMs + onsetMs + 100;
  stall(onsetMs * 2 + 100, 0.15);
  assert.equal(feed.sample()?.window?.kind, 'warm');
  assert.equal(feed.windowMs, onsetMs, 'one late window: a hiccup, onset windows still');
  clock.t += onsetMs + onsetMs + 100;
  stall(onsetMs * 2 + 100, 0.15);
  assert.equal(feed.sample()?.window?.kind, 'warm');
  assert.equal(feed.windowMs, steadyMs, 'the second late window in a row, not hot: the next window is a steady one');
  // on time: the window was a steady one, told as such to the detector: its second hot window of the
  // run stands still on the steady count (two), where onset windows would need a third
  clock.t += steadyMs;
  hot(steadyMs);
  const v = feed.sample();
  assert.equal(v?.event, 'standing-still', 'judged as a steady window: the run\'s second hot one stands still');
  assert.equal(v?.hotWindows, 2);
  assert.equal(feed.windowMs, steadyMs, 'a deadline runs, on time: steady windows');
  // the deadline runs and sbd falls behind: two late windows in a row stretch the next ones
  clock.t += steadyMs + onsetMs + 100;
  hot(steadyMs + onsetMs + 100);
  assert.equal(feed.sample()?.state, 'standing-still');
  assert.equal(feed.windowMs, steadyMs, 'one late window: steady still');
  clock.t += steadyMs + onsetMs + 100;
  hot(steadyMs + onsetMs + 100);
  assert.equal(feed.sample()?.state, 'standing-still');
  assert.equal(feed.windowMs, steadyMs * DEADLINE_WINDOWS_STRETCH_UNDER_LOAD, 'two late windows in a row while a deadline runs: stretched');
  // a stretched window judges its share over its own length; on time again, steady windows
  clock.t += steadyMs * DEADLINE_WINDOWS_STRETCH_UNDER_LOAD;
  hot(steadyMs * DEADLINE_WINDOWS_STRETCH_UNDER_LOAD);
  const long = feed.sample();
  assert.equal(long?.window?.kind, 'hot');
  assert.equal(long?.window?.windowMs, steadyMs * DEADLINE_WINDOWS_STRETCH_UNDER_LOAD);
  assert.equal(feed.windowMs, steadyMs, 'on time: steady windows again');
  feed.stop();
  assert.equal(windowPeriodMs('steady', 'psi', cfg, false, 5), steadyMs, 'no deadline: never stretched (onset windows fall back to steady ones instead)');
  assert.equal(windowPeriodMs('steady', 'timer', cfg, true, 5), 5000, 'the timer feed keeps its period');
  // and on time from the start: onset windows throughout
  const cg2 = fakeCgroup();
  const clock2 = { t: 0 };
  const f2 = feedOn(cg2.dir, clock2);
  f2.feed.start();
  f2.trigger.fire();
  clock2.t += onsetMs;
  cg2.set({ fullUs: 450_000, ownHigh: 60 });
  assert.equal(f2.feed.sample()?.window?.kind, 'hot');
  assert.equal(f2.feed.windowMs, onsetMs, 'on time: onset windows still');
  f2.feed.stop();
});

test('heldFigures: memory.current (and the full-stall total unless sizes only) through the held files; nothing when none are held', (t) => {
  t.mock.timers.enable({ apis: ['setTimeout'] });
  const cg = fakeCgroup();
  const clock = { t: 0 };
  const { feed, trigger } = feedOn(cg.dir, clock);
  feed.start();
  assert.equal(feed.heldFigures(0, true), undefined, 'asleep, nothing held: the slice reads by path');
  trigger.fire();
  cg.set({ fullUs: 700_000, current: 50 * MiB });
  assert.deepEqual(feed.heldFigures(40, false), { atMs: 40, currentBytes: 50 * MiB, fullUs: 700_000 });
  assert.deepEqual(feed.heldFigures(41, true), { atMs: 41, currentBytes: 50 * MiB, fullUs: 0 });
  fs.rmSync(cg.dir, { recursive: true });
  assert.equal(feed.heldFigures(42, true), undefined, 'a failed read: undefined, the slice reads by path and finds it gone');
  feed.stop();
});

test("recentFigures: the last sample's size and full-stall total while fresh, for the slice's feed; nothing before a sample or once old", () => {
  const cg = fakeCgroup();
  const clock = { t: 0 };
  const { feed, trigger } = feedOn(cg.dir, clock);
  feed.start();
  assert.equal(feed.recentFigures(0, 1000), undefined, 'no sample yet');
  cg.set({ fullUs: 700_000, current: 50 * MiB });
  clock.t = 100;
  trigger.fire();
  assert.deepEqual(feed.recentFigures(600, 1000), { atMs: 100, currentBytes: 50 * MiB, fullUs: 700_000 });
  assert.equal(feed.recentFigures(1101, 1000), undefined, 'older than the limit: the slice reads the files');
  assert.equal(feed.recentFigures(50, 1000), undefined, 'taken after the instant asked for');
  feed.stop();
});

test('after a short sleep the wake ends a window begun at the last sample; after a long one it starts afresh', () => {
  const { resumeFrom } = require('../../../dist/stall/detector.js');
  assert.equal(resumeFrom(0, 2000, cfg), true, 'asleep no longer than a window');
  assert.equal(resumeFrom(0, 2001, cfg), false, 'longer: never averaged into one window');
  assert.equal(resumeFrom(100, 50, cfg), false, 'a clock that went back');
  const cg = fakeCgroup();
  const clock = { t: 0 };
  const { feed, verdicts } = feedOn(cg.dir, clock);
  feed.start();
  feed.hint('own brake fired');
  clock.t = 500;
  assert.equal(feed.sample()?.window?.kind, 'clear');
  assert.equal(feed.sampling, false, 'clear: asleep');
  // the stall begins at 600 ms; the hint wakes it at 1,000 ms
  let full = 0;
  const stall = (fromMs, toMs) => { full += (toMs - fromMs) * 1000 * 0.8; cg.set({ fullUs: Math.round(full), ownHigh: 10 + toMs }); };
  stall(600, 1000);
  clock.t = 1000;
  feed.hint('own brake fired');
  assert.equal(verdicts.at(-1).event, 'window', 'the wake judged the window 500-1,000 ms');
  assert.equal(verdicts.at(-1).window.kind, 'hot');
  for (const t of [1500, 2000]) {
    stall(t - 500, t);
    clock.t = t;
    feed.sample();
  }
  assert.equal(verdicts.at(-1).event, 'standing-still', 'three hot onset windows by 2,000 ms: the first began before the wake');
  feed.stop();
  // a long sleep: the wake's sample is a first sample
  const cg2 = fakeCgroup();
  const clock2 = { t: 0 };
  const f2 = feedOn(cg2.dir, clock2);
  f2.feed.start();
  f2.feed.hint('own brake fired');
  clock2.t = 500;
  f2.feed.sample();
  clock2.t = 2600;
  cg2.set({ fullUs: 1_000_000, ownHigh: 20 });
  f2.feed.hint('own brake fired');
  assert.equal(f2.verdicts.at(-1).event, 'first-sample', 'asleep 2.1 s: a fresh start');
  f2.feed.stop();
});

test('a clear window in which anonymous memory pressed its own brake keeps the feed awake; one with the brake at rest lets it sleep', () => {
  const { pressedInWindow } = require('../../../dist/stall/detector.js');
  assert.equal(pressedInWindow(undefined, cfg), false, 'no window');
  assert.equal(pressedInWindow({ ownHighDelta: 0, anonShare: 1 }, cfg), false, 'at rest');
  assert.equal(pressedInWindow({ ownHighDelta: 1, anonShare: 0.95 }, cfg), true);
  assert.equal(pressedInWindow({ ownHighDelta: 1, anonShare: 0.3 }, cfg), false, 'page cache presses it: under the anon fuse');
  const cg = fakeCgroup();
  const clock = { t: 0 };
  const { feed } = feedOn(cg.dir, clock);
  feed.start();
  cg.set({ ownHigh: 1 });
  feed.hint('own brake fired');
  // pressing its brake, little stall (a wedge's last clear windows before its stall)
  for (const [t, high] of [[500, 40], [1000, 90]]) {
    cg.set({ ownHigh: high, fullUs: t * 30 });
    clock.t = t;
    assert.equal(feed.sample()?.window?.kind, 'clear');
    assert.equal(feed.sampling, true, `${t} ms: clear but the brake pressed: awake`);
  }
  // the stall begins at 1,100 ms: seen by the window that ends at 1,500 ms, not at a later hint
  cg.set({ ownHigh: 150, fullUs: 30_000 + 320_000 });
  clock.t = 1500;
  assert.equal(feed.sample()?.window?.kind, 'hot');
  cg.set({ ownHigh: 150, fullUs: 350_000 });
  clock.t = 2000;
  assert.equal(feed.sample()?.window?.kind, 'clear');
  assert.equal(feed.sampling, false, 'clear and the brake at rest: asleep');
  feed.stop();
});

test('a session whose page cache presses its brake all the time lets its feed sleep after a clear window (its windows are never hot)', () => {
  const cg = fakeCgroup();
  const clock = { t: 0 };
  const { feed, logs } = feedOn(cg.dir, clock);
  feed.start();
  cg.set({ ownHigh: 1, anon: 20 * MiB });
  feed.hint('own brake fired');
  cg.set({ ownHigh: 60, anon: 20 * MiB, fullUs: 20_000 });
  clock.t = 500;
  assert.equal(feed.sample()?.window?.kind, 'clear');
  assert.equal(feed.sampling, false, 'pressed, but by page cache (anon 0.32): asleep');
  assert.equal(logs.filter((l) => l.msg === 'waking').length, 1);
  feed.stop();
});

test('a storm (AWAKE_FEEDS_OF_A_STORM feeds awake) stretches a running deadline\'s windows before sbd runs late; nothing else', () => {
  const steadyMs = cfg.windowS * 1000;
  const stretched = steadyMs * DEADLINE_WINDOWS_STRETCH_UNDER_LOAD;
  assert.equal(windowPeriodMs('steady', 'psi', cfg, true, 0, AWAKE_FEEDS_OF_A_STORM), stretched, 'a deadline in a storm, on time: stretched');
  assert.equal(windowPeriodMs('steady', 'psi', cfg, true, 0, AWAKE_FEEDS_OF_A_STORM - 1), steadyMs, 'one feed fewer: steady');
  assert.equal(windowPeriodMs('steady', 'psi', cfg, false, 0, AWAKE_FEEDS_OF_A_STORM * 10), steadyMs, 'no deadline: never stretched');
  assert.equal(windowPeriodMs('onset', 'psi', cfg, false, 0, AWAKE_FEEDS_OF_A_STORM * 10), cfg.onsetWindowS * 1000, 'a session not judged yet keeps its onset windows');
  assert.equal(windowPeriodMs('steady', 'timer', cfg, true, 0, AWAKE_FEEDS_OF_A_STORM * 10), 5000, 'the timer feed keeps its period');
});

test('AwakeFeeds: a PSI feed counts itself in while its windows run and out once asleep or stopped; a running deadline stretches as the storm comes and goes', () => {
  const awake = new AwakeFeeds();
  const onsetMs = cfg.onsetWindowS * 1000;
  const steadyMs = cfg.windowS * 1000;
  const cgA = fakeCgroup();
  const cgB = fakeCgroup();
  const clock = { t: 0 };
  const a = feedOn(cgA.dir, clock, { n: 0 }, [], awake);
  const b = feedOn(cgB.dir, clock, { n: 0 }, [], awake);
  a.feed.start();
  b.feed.start();
  assert.equal(awake.count, 0, 'armed, asleep: not counted');
  // A stalls to a verdict and its deadline runs
  let full = 0;
  a.trigger.fire();
  assert.equal(awake.count, 1, 'woken: counted');
  for (let i = 0; i < 3; i++) {
    clock.t += onsetMs;
    full += onsetMs * 1000 * 0.9;
    cgA.set({ fullUs: Math.round(full), ownHigh: 10 + clock.t });
    a.feed.sample();
  }
  assert.equal(a.feed.state.deadline !== undefined, true, 'A stands still: its deadline runs');
  assert.equal(a.feed.windowMs, steadyMs, 'no storm: steady windows');
  assert.equal(awake.count, 1, 'its many windows counted once');
  // B wakes and sleeps on a clear window: in, then out
  b.trigger.fire();
  assert.equal(awake.count, 2);
  clock.t += onsetMs;
  cgB.set({ fullUs: 0, ownHigh: 0 });
  assert.equal(b.feed.sample()?.window?.kind, 'clear');
  clock.t += steadyMs; // past the trigger's window: asleep
  assert.equal(b.feed.sample()?.window?.kind, 'clear');
  assert.equal(b.feed.sampling, false);
  assert.equal(awake.count, 1, 'asleep: out');
  // a storm's other feeds wake: A's next window is stretched, on time as it is
  for (let i = 1; i < AWAKE_FEEDS_OF_A_STORM; i++) awake.enter();
  const hot = (ms) => { full += ms * 1000 * 0.9; cgA.set({ fullUs: Math.round(full), ownHigh: 10 + clock.t }); };
  clock.t += steadyMs;
  hot(steadyMs);
  assert.equal(a.feed.sample()?.state, 'standing-still');
  assert.equal(a.feed.windowMs, steadyMs * DEADLINE_WINDOWS_STRETCH_UNDER_LOAD, 'a storm: stretched');
  // the storm passes: steady again at its next window
  for (let i = 1; i < AWAKE_FEEDS_OF_A_STORM; i++) awake.leave();
  clock.t += steadyMs * DEADLINE_WINDOWS_STRETCH_UNDER_LOAD;
  hot(steadyMs * DEADLINE_WINDOWS_STRETCH_UNDER_LOAD);
  assert.equal(a.feed.sample()?.window?.windowMs, steadyMs * DEADLINE_WINDOWS_STRETCH_UNDER_LOAD, 'the stretched window judged over its own length');
  assert.equal(a.feed.windowMs, steadyMs, 'no storm: steady windows again');
  a.feed.stop();
  assert.equal(awake.count, 0, 'stopped: out');
  awake.enter(); // another feed, awake: the count must not fall below it
  a.feed.stop();
  b.feed.stop();
  assert.equal(awake.count, 1, 'a second stop, and the stop of a sleeping feed, take nothing off');
});
