/**
 * Tells an `oom-kill` incident when a session's memory.events.local `oom_kill` counter moves
 * (sbd's FileWatch already sees every change of that file). Thin: reads the cgroup's files and,
 * where the user may, the kernel log (/dev/kmsg; Debian's kernel.dmesg_restrict=1 forbids it);
 * the judging is in ./kills.ts.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { parseFlatKeyed, parseLimit, parseSingle } from '../cgroup/parse';
import { CgroupGoneError } from '../cgroup/read';
import type { Incident } from '../daemon/incidents';
import { type LoggedKill, type OomFigures, describeKills, killsIn, newKills } from './kills';

/** What the watch needs of a session. */
export interface OomSession {
  unit: string;
  id: string;
  controlGroup: string;
  cgroupDir: string;
}

export interface OomWatchDeps {
  tell(i: Incident): void;
  observeOnly: boolean;
  /** The session's memory.events.local read through an fd held already (its awake feed's), or
   * undefined to read it by path; may throw when the cgroup is gone. */
  heldEventsLocal?: (s: OomSession) => string | undefined;
  /** The kernel log's records, or why they cannot be read. */
  readKmsg?: () => { records: string[] } | { problem: string };
  now?: () => number;
}

/**
 * The oom_kill counter is read at most this often per session, and once after the last change of
 * a burst (util/keyed-throttle.ts): memory.events.local changes with every breach of the brake,
 * many times a second for each session of a storm (its read was 6 % of sbd's CPU in issue 15's
 * storm of 200), and a kill told half a second late loses nothing.
 */
export const OOM_CHECK_EVERY_MS = 500;

/** A size of one read of /dev/kmsg: a record is at most 1 KiB of text plus its dictionary. */
const KMSG_RECORD_MAX = 8192;

/** Every record in the kernel's ring buffer, without blocking (O_NONBLOCK: EAGAIN at the end). */
export function readKmsg(file = '/dev/kmsg'): { records: string[] } | { problem: string } {
  let fd: number;
  try {
    fd = fs.openSync(file, fs.constants.O_RDONLY | fs.constants.O_NONBLOCK);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code ?? String(err);
    return { problem: `${file}: ${code}${code === 'EPERM' ? ' (kernel.dmesg_restrict=1)' : ''}` };
  }
  const records: string[] = [];
  const buf = Buffer.alloc(KMSG_RECORD_MAX);
  try {
    for (;;) {
      let n: number;
      try {
        n = fs.readSync(fd, buf, 0, buf.length, null);
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code === 'EPIPE') continue; // overwritten while we read: go on
        if ((err as NodeJS.ErrnoException).code === 'EAGAIN') break; // the end
        throw err;
      }
      if (n === 0) break; // a regular file (tests)
      records.push(...buf.toString('utf8', 0, n).split(/\n(?=\d+,\d+,\d+,)/));
    }
  } finally {
    fs.closeSync(fd);
  }
  return { records };
}

function read(dir: string, file: string): string | undefined {
  try {
    return fs.readFileSync(path.join(dir, file), 'utf8');
  } catch {
    return undefined; // gone (the scope is being stopped) or absent (memory.peak before 5.19)
  }
}

/** The cgroup's figures; what cannot be read is left out. */
export function readFigures(dir: string): OomFigures {
  const f: OomFigures = {};
  const num = (file: string, parse: (t: string, f: string) => number): number | undefined => {
    const t = read(dir, file);
    return t === undefined ? undefined : parse(t, file);
  };
  const keyed = (file: string): Record<string, number> | undefined => {
    const t = read(dir, file);
    return t === undefined ? undefined : parseFlatKeyed(t, file);
  };
  const set = <K extends keyof OomFigures>(k: K, v: OomFigures[K] | undefined): void => {
    if (v !== undefined) f[k] = v;
  };
  set('currentBytes', num('memory.current', parseSingle));
  set('highBytes', num('memory.high', parseLimit));
  set('maxBytes', num('memory.max', parseLimit));
  set('peakBytes', num('memory.peak', parseSingle));
  set('events', keyed('memory.events'));
  set('eventsLocal', keyed('memory.events.local'));
  return f;
}

export class OomKillWatch {
  /** The last oom_kill count seen per unit. */
  private readonly seen = new Map<string, number>();

  constructor(private readonly deps: OomWatchDeps) {}

  private count(s: OomSession): number | undefined {
    let t: string | undefined;
    try {
      t = this.deps.heldEventsLocal?.(s);
    } catch (err) {
      if (err instanceof CgroupGoneError) return undefined; // gone (the scope is being stopped)
      t = undefined; // any other failure of the held fd: read by path
    }
    t ??= read(s.cgroupDir, 'memory.events.local');
    return t === undefined ? undefined : parseFlatKeyed(t, 'memory.events.local').oom_kill;
  }

  /** Start from the session's present count: kills before sbd adopted it are not news. */
  watch(s: OomSession): void {
    this.seen.set(s.unit, this.count(s) ?? 0);
  }

  /** A feed's sample read the session's oom_kill counter: tell when it moved (nothing for a
   * session not watched yet: its count at adoption is not news). */
  sampled(s: OomSession, count: number): void {
    if (this.seen.has(s.unit)) this.check(s, count);
  }

  /** memory.events.local changed: tell when its oom_kill counter moved. `known`: the counter as
   * a sample just read it, instead of reading it again. */
  check(s: OomSession, known?: number): void {
    const now = known ?? this.count(s);
    const before = this.seen.get(s.unit) ?? 0;
    if (now === undefined || now === before) return;
    this.seen.set(s.unit, now);
    const count = newKills(before, now);
    if (count === 0) return;
    const figures = readFigures(s.cgroupDir);
    const kmsg = (this.deps.readKmsg ?? readKmsg)();
    const kills: LoggedKill[] = 'records' in kmsg ? killsIn(kmsg.records, s.controlGroup).slice(-count) : [];
    const problem = 'problem' in kmsg ? kmsg.problem : undefined;
    this.deps.tell({
      type: 'oom-kill',
      unit: s.unit,
      session: s.id,
      atMs: (this.deps.now ?? Date.now)(),
      observeOnly: this.deps.observeOnly,
      message: describeKills(count, kills, figures, problem),
      count,
      kills,
      ...(problem !== undefined ? { kernelLog: problem } : {}),
      ...figures,
    });
  }

  forget(unit: string): void {
    this.seen.delete(unit);
  }
}
