/**
 * Warming, while sbd is idle, the code that judges a storm (issue 15, item 5). An idle sbd takes
 * no window: its feeds sleep until the kernel wakes them, so a storm's first samples, detector
 * steps and incident encodings are the first that process ever runs, and V8 runs a function in
 * its interpreter until the function has run often enough to be compiled. In bench:storm's 200
 * sessions those cold calls were what sbd spent its CPU on while the sessions waited for their
 * verdicts. The rounds here take the same paths with the same shapes: the sample's files read and
 * parsed (sbd's own cgroup's, which has them all), the detector stepped from a wake through hot
 * windows to a verdict and a deadline's window, and a standing-still incident encoded as its
 * journal entry and its Incident signal. Nothing is sent, saved or told: the rounds' results are
 * dropped. The data gathered (one read) is apart from the rest, which is pure.
 */
import * as fs from 'node:fs';
import { CGROUP_ROOT, cgroupDir, type MemorySample, SampleFiles } from '../cgroup/read';
import type { DetectorConfig } from '../config/schema';
import { encodeEntry } from '../journal/encode';
import { incidentEntry } from '../journal/incident-entry';
import { encodeSignal } from '../bus-lite/wire';
import { initialState, type Verdict } from '../stall/detector';
import { type SampleReader, SessionFeed } from '../stall/feed';
import { SERVICE_INTERFACE, SERVICE_PATH } from './bus-name';
import { INCIDENT_SIGNATURE, incidentToBus } from './bus-types';
import type { Incident } from './incidents';

/**
 * Rounds of the warm-up: one window of a feed each, a verdict and its incident encoded every
 * fourth. 3,000: on the host (`npm run bench:warm-up`), a feed's first 200 windows after them cost
 * 0.48 of a cold process's, after 1,000 0.60, after 500 0.79 (20,000 windows: 0.37); the 3,000
 * cost about 0.24 s of one CPU there, spread over idle turns of the loop (WARM_UP_SLICE_MS).
 */
export const WARM_UP_ROUNDS = 3000;

/**
 * How long after the adoption the warm-up begins, in ms. A start is when sbd, systemd --user and
 * the bus are busiest (the adoption's reads and calls, a restart's recoveries); 5 s lets them end
 * first, and a storm that comes sooner warms the code itself, as without the warm-up.
 */
export const WARM_UP_DELAY_MS = 5_000;

/**
 * The longest the warm-up holds the loop at a time, in ms, before it yields (setImmediate: the
 * poll phase runs between two slices, so a PSI trigger, a bus call or a hint waits at most this
 * long). 5 ms is a tenth of the shortest window sbd times (onsetWindowS, 0.5 s) less its jitter.
 */
export const WARM_UP_SLICE_MS = 5;

/** A hot window's stall in the rounds' synthetic pressure, as a share of the window (0.8: over any trip line a config may set below 1). */
const HOT_SHARE = 0.8;

/**
 * A round's sample (pure but for the object it is handed, changed in place so that it keeps the
 * shape the sample's parser gave it): at its brake, its memory anonymous, its own brake fired,
 * `fullUs` of full stall in all. The evidence of a session's own stall, whatever sbd's own
 * cgroup holds.
 */
export function asStalled(raw: MemorySample, atMs: number, fullUs: number, highEvents: number): MemorySample {
  const current = Number.isFinite(raw.highBytes) ? raw.highBytes : raw.currentBytes;
  raw.atMs = atMs;
  raw.currentBytes = current;
  raw.anonBytes = current;
  raw.shmemBytes = 0;
  raw.fileBytes = 0;
  raw.ownHighEvents = highEvents;
  raw.pressureFullUs = fullUs;
  raw.pressureSomeUs = fullUs;
  return raw;
}

/** The standing-still incident a controller tells of verdict `v` (controller.ts onVerdict's shape), for the encoders. */
export function warmIncident(v: Verdict): Incident {
  return {
    type: 'standing-still', unit: 'warm-up.scope', session: 'warm-up', atMs: Date.now(), message: `standing still against its own brake (${v.explain})`, observeOnly: false,
    share: v.window?.share, anonShare: v.window?.anonShare, evidence: v.window?.evidence, deadlineS: Math.round(v.deadlineRemainingMs ?? 0) / 1000,
  };
}

/** The bytes of an incident's journal entry and Incident signal, encoded and dropped (pure). */
export function encodedSize(i: Incident, serial: number): number {
  return encodeEntry(incidentEntry(i, 4)).length
    + encodeSignal(serial, { path: SERVICE_PATH, interface: SERVICE_INTERFACE, member: 'Incident', signature: INCIDENT_SIGNATURE, body: incidentToBus(i) }).length;
}

/** sbd's own cgroup directory, from /proc/self/cgroup's unified line (undefined on cgroup v1 or when unreadable). */
export function ownCgroupDir(procSelfCgroup = '/proc/self/cgroup', root = CGROUP_ROOT): string | undefined {
  try {
    const line = fs.readFileSync(procSelfCgroup, 'utf8').split('\n').find((l) => l.startsWith('0::'));
    return line === undefined ? undefined : cgroupDir(line.slice(3), root);
  } catch {
    return undefined;
  }
}

/** A sample for rounds that cannot read a cgroup (cgroup v1, no memory controller): the keys of a read one, in its order. */
function syntheticSample(): MemorySample {
  const mib = 2 ** 20;
  return { atMs: 0, currentBytes: 60 * mib, highBytes: 64 * mib, maxBytes: Infinity, swapMaxBytes: Infinity, anonBytes: 60 * mib, shmemBytes: 0, fileBytes: 0, ownHighEvents: 0, oomKills: 0, pressureFullUs: 0, pressureSomeUs: 0, cpuSomeUs: 0 };
}

export interface WarmUpDeps {
  config: DetectorConfig;
  /** The cgroup whose files the rounds read (sbd's own); undefined: synthetic samples. */
  dir: string | undefined;
  /** The slices' clock, ms (monotonic). */
  now(): number;
  /** Runs the next slice after the loop's poll phase (setImmediate; tests pass their own). */
  later(fn: () => void): void;
  rounds?: number;
}

export interface WarmUpResult {
  rounds: number;
  /** Standing-still verdicts reached, each encoded as a journal entry and a signal. */
  verdicts: number;
  /** The slices' time in all, ms. */
  busyMs: number;
  /** Whether the rounds read the cgroup's files (false: synthetic samples). */
  read: boolean;
  /** Bytes of journal entries and signals encoded (and dropped). */
  encodedBytes: number;
}

export interface WarmUp {
  /** Resolves when the rounds are done (or stopped). */
  done: Promise<WarmUpResult>;
  stop(): void;
}

/**
 * Run the rounds in slices of at most WARM_UP_SLICE_MS, yielding between them. Each round is one
 * window of a SessionFeed (the class a session's feed is) on its own clock, fed the cgroup's files
 * as read (SampleFiles) with the figures of a stall (asStalled); a verdict's incident is encoded,
 * and the next round starts a new episode. The feed arms no trigger and is stopped at the end. A
 * read that fails (the cgroup gone) turns the rest to synthetic samples.
 */
export function startWarmUp(deps: WarmUpDeps): WarmUp {
  const cfg = deps.config;
  const total = deps.rounds ?? WARM_UP_ROUNDS;
  const windowMs = cfg.onsetWindowS * 1000;
  let files: SampleFiles | undefined;
  try {
    files = deps.dir === undefined ? undefined : SampleFiles.open(deps.dir);
  } catch {
    files = undefined; // no cgroup v2 memory files here: synthetic samples
  }
  const read = files !== undefined;
  let clockMs = 0;
  let fullUs = 0;
  let highEvents = 0;
  let rounds = 0;
  let verdicts = 0;
  let encodedBytes = 0;
  let newEpisode = false;
  const reader: SampleReader = {
    read: (atMs) => {
      let raw: MemorySample | undefined;
      if (files) {
        try {
          raw = files.read(atMs);
        } catch {
          files.close();
          files = undefined;
        }
      }
      return asStalled(raw ?? syntheticSample(), atMs, fullUs, highEvents);
    },
    close: () => undefined, // the rounds' files are closed at their end
  };
  const feed = new SessionFeed(deps.dir ?? '/nonexistent/warm-up', {
    config: cfg,
    unitsInSlice: () => 1,
    now: () => clockMs,
    armTrigger: () => ({ close: () => undefined, unref: () => undefined }),
    openFiles: () => reader,
    onVerdict: (v) => {
      if (v.event !== 'standing-still') return;
      verdicts++;
      encodedBytes += encodedSize(warmIncident(v), verdicts);
      newEpisode = true;
    },
    onGone: () => undefined,
    log: () => undefined,
  });
  let busyMs = 0;
  let stopped = false;
  let finish: (r: WarmUpResult) => void = () => undefined;
  const done = new Promise<WarmUpResult>((resolve) => (finish = resolve));
  const end = (): void => {
    feed.stop();
    files?.close();
    files = undefined;
    finish({ rounds, verdicts, busyMs: Math.round(busyMs), read, encodedBytes });
  };
  const round = (): void => {
    clockMs += windowMs;
    fullUs += HOT_SHARE * windowMs * 1000;
    highEvents++;
    if (newEpisode) {
      newEpisode = false;
      feed.setState(initialState());
    }
    feed.sample();
    rounds++;
  };
  const slice = (): void => {
    if (stopped) return;
    const t0 = deps.now();
    while (rounds < total && deps.now() - t0 < WARM_UP_SLICE_MS) round();
    busyMs += deps.now() - t0;
    if (rounds >= total) {
      stopped = true;
      end();
    } else deps.later(slice);
  };
  feed.start(); // the fake trigger: no fd, no timer
  feed.wake('warm-up'); // its files held (the reader), and its first sample
  deps.later(slice);
  return {
    done,
    stop: () => {
      if (stopped) return;
      stopped = true;
      end();
    },
  };
}
