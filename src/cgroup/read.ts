/**
 * Thin readers over the parsers: one cgroup's memory figures, read from its directory.
 * A cgroup that vanished while we read it (the session ended) is a CgroupGoneError, never a crash.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { readAgain } from '../util/read-again';
import { parseFlatKeyed, parseLimit, parsePressure, parseSingle, pickKeys } from './parse';

/** The root of the cgroup v2 hierarchy. */
export const CGROUP_ROOT = '/sys/fs/cgroup';

/** The cgroup directory behind systemd's ControlGroup property ("/user.slice/..."). */
export function cgroupDir(controlGroup: string, root = CGROUP_ROOT): string {
  return path.join(root, controlGroup);
}

/** The cgroup is gone (ENOENT, or ENODEV from a file of a cgroup being removed). */
export class CgroupGoneError extends Error {
  readonly dir: string;
  constructor(dir: string) {
    super(`cgroup ${dir} is gone`);
    this.name = 'CgroupGoneError';
    this.dir = dir;
  }
}

function isGone(err: unknown): boolean {
  const code = (err as NodeJS.ErrnoException | undefined)?.code;
  return code === 'ENOENT' || code === 'ENODEV';
}

/**
 * Read one file of a cgroup; CgroupGoneError when the cgroup vanished. `dir` is a cgroup's
 * directory and `name` a file's name: joined as they are, not through path.join, whose
 * normalising was a fifth of the CPU of an idle sbd reading a thousand members of a slice.
 */
export function readCgroupFile(dir: string, name: string): string {
  try {
    return fs.readFileSync(`${dir}/${name}`, 'utf8');
  } catch (err) {
    if (isGone(err)) throw new CgroupGoneError(dir);
    throw err;
  }
}

/** Everything the stall detector and `sbctl status` need from one cgroup at one instant. */
export interface MemorySample {
  /** When it was read: a monotonic clock in ms (performance.now()-like; only differences matter). */
  atMs: number;
  currentBytes: number;
  highBytes: number;
  maxBytes: number;
  swapMaxBytes: number;
  anonBytes: number;
  shmemBytes: number;
  fileBytes: number;
  /** memory.events.local `high`: times this cgroup's own brake was breached. */
  ownHighEvents: number;
  /** memory.events.local `oom_kill`: processes of this cgroup the kernel's OOM killer killed
   * (the OOM watch takes it from an awake feed's samples: oom/watch.ts). */
  oomKills?: number;
  /** memory.pressure `full total` (µs) and `some total`; 0 on a kernel without PSI. */
  pressureFullUs: number;
  pressureSomeUs: number;
  /** cpu.pressure `some total` (µs): time a task of the cgroup waited in the run queue for a
   * CPU. A window its task spent waiting there is no evidence of a memory stall (detector.ts,
   * cpuStarvedShare). Undefined without the file (a kernel without PSI, a fixture or trace). */
  cpuSomeUs?: number;
}

/** A file that a cgroup may lack (cpu.stat without the cpu controller): undefined then. */
export function readOptional(dir: string, name: string): string | undefined {
  try {
    return readCgroupFile(dir, name);
  } catch (err) {
    if (err instanceof CgroupGoneError && fs.existsSync(dir)) return undefined; // file absent, cgroup there
    throw err;
  }
}

/** memory.pressure's `full` total (µs) from its text; 0 when there is none (a kernel without PSI). */
export function fullStallUsOf(pressureText: string | undefined, dir: string): number {
  return pressureText === undefined ? 0 : (parsePressure(pressureText, `${dir}/memory.pressure`).full?.totalUs ?? 0);
}

/** memory.current of the cgroup at `dir`, in bytes; CgroupGoneError when the cgroup vanished. */
export function readCurrentBytes(dir: string): number {
  return parseSingle(readCgroupFile(dir, 'memory.current'), `${dir}/memory.current`);
}

/** The texts of one sample's files; a file that is absent (memory.pressure and cpu.pressure
 * without PSI, memory.swap.max without swap accounting) is undefined. */
type SampleTexts = Record<'memory.current' | 'memory.high' | 'memory.max' | 'memory.stat' | 'memory.events.local', string> & Record<'memory.pressure' | 'memory.swap.max' | 'cpu.pressure', string | undefined>;

/** The files of a sample, each with whether a cgroup may lack it. */
const SAMPLE_FILES = [
  ['memory.current', false], ['memory.high', false], ['memory.max', false], ['memory.stat', false],
  ['memory.events.local', false], ['memory.pressure', true], ['memory.swap.max', true], ['cpu.pressure', true],
] as const;
export type SampleFileName = (typeof SAMPLE_FILES)[number][0];
/** Each sample file's place among SampleFiles' fds. */
const SAMPLE_INDEX = Object.fromEntries(SAMPLE_FILES.map(([name], i) => [name, i])) as Record<SampleFileName, number>;

/** Parse one sample's texts; `file(name)` names a file in an error. It is called for every file of
 * every sample: a plain join (a cgroup's directory has no trailing slash), not path.join, whose
 * normalising was 5 % of a sample's CPU in the storm's profile (session 18). */
function sampleOf(t: SampleTexts, atMs: number, file: (name: string) => string): MemorySample {
  // memory.stat has some 50 lines: only the three judged are parsed (bench:storm's profile).
  const stat = pickKeys(t['memory.stat'], file('memory.stat'), ['anon', 'shmem', 'file'] as const);
  const eventsLocal = pickKeys(t['memory.events.local'], file('memory.events.local'), ['high', 'oom_kill'] as const);
  // Absent on a kernel without PSI (booted psi=0): the fallback measure needs the rest.
  const pressureText = t['memory.pressure'];
  const pressure = pressureText === undefined ? undefined : parsePressure(pressureText, file('memory.pressure'));
  const swapMax = t['memory.swap.max'];
  const cpuText = t['cpu.pressure'];
  return {
    atMs,
    currentBytes: parseSingle(t['memory.current'], file('memory.current')),
    highBytes: parseLimit(t['memory.high'], file('memory.high')),
    maxBytes: parseLimit(t['memory.max'], file('memory.max')),
    swapMaxBytes: swapMax === undefined ? Infinity : parseLimit(swapMax, file('memory.swap.max')),
    anonBytes: stat.anon,
    shmemBytes: stat.shmem,
    fileBytes: stat.file,
    ownHighEvents: eventsLocal.high,
    oomKills: eventsLocal.oom_kill,
    pressureFullUs: pressure?.full?.totalUs ?? 0,
    pressureSomeUs: pressure?.some.totalUs ?? 0,
    ...(cpuText === undefined ? {} : { cpuSomeUs: parsePressure(cpuText, file('cpu.pressure')).some.totalUs }),
  };
}

/** Read a MemorySample from the cgroup directory `dir`, each file by its path: eight files (no
 * cpu.stat: nothing judges it). A feed that is awake reads through SampleFiles instead. */
export function readMemorySample(dir: string, atMs: number): MemorySample {
  const texts = {} as Record<string, string | undefined>;
  for (const [name, optional] of SAMPLE_FILES) texts[name] = optional ? readOptional(dir, name) : readCgroupFile(dir, name);
  return sampleOf(texts as SampleTexts, atMs, (name) => `${dir}/${name}`);
}

/**
 * The files of one sample held open while a feed is awake (issue 15, item 5: in a storm of 200
 * sessions, opening seven files by path on every 0.5 s window, with fs's option parsing and a
 * path join per read, was a quarter of sbd's time). Each is read again with a positioned read at
 * offset 0: kernfs regenerates a cgroup file's content on a read from its start (seq_file), so
 * the text is as fresh as a new open's. A cgroup removed meanwhile answers ENODEV: CgroupGoneError.
 * Eight fds while awake, none once closed (the feed closes them when it sleeps).
 */
export class SampleFiles {
  private fds: Array<number | undefined>;

  private constructor(
    readonly dir: string,
    fds: Array<number | undefined>,
  ) {
    this.fds = fds;
  }

  /** Open the files of `dir`. CgroupGoneError when it is gone; any other failure (EMFILE:
   * out of open files) is thrown as it is, with nothing left open. */
  static open(dir: string): SampleFiles {
    const fds: Array<number | undefined> = [];
    try {
      for (const [name, optional] of SAMPLE_FILES) {
        try {
          fds.push(fs.openSync(`${dir}/${name}`, 'r'));
        } catch (err) {
          if (!isGone(err)) throw err;
          if (!optional || !fs.existsSync(dir)) throw new CgroupGoneError(dir);
          fds.push(undefined); // absent, the cgroup there: as readOptional
        }
      }
    } catch (err) {
      for (const fd of fds) if (fd !== undefined) fs.closeSync(fd);
      throw err;
    }
    return new SampleFiles(dir, fds);
  }

  private text(fd: number): string {
    try {
      return readAgain(fd, 'latin1'); // cgroup files are ASCII
    } catch (err) {
      if (isGone(err)) throw new CgroupGoneError(this.dir);
      throw err;
    }
  }

  /** One sample, read now. Throws CgroupGoneError when the cgroup was removed. */
  read(atMs: number): MemorySample {
    if (this.fds.length === 0) throw new Error(`the sample files of ${this.dir} are closed`);
    const texts = {} as Record<string, string | undefined>;
    SAMPLE_FILES.forEach(([name], i) => {
      const fd = this.fds[i];
      texts[name] = fd === undefined ? undefined : this.text(fd);
    });
    return sampleOf(texts as SampleTexts, atMs, (name) => `${this.dir}/${name}`);
  }

  /** One held file's text, read now (undefined when it is absent or the files are closed).
   * Throws CgroupGoneError when the cgroup was removed. */
  textOf(name: SampleFileName): string | undefined {
    const fd = this.fds[SAMPLE_INDEX[name]];
    return fd === undefined ? undefined : this.text(fd);
  }

  /** Close every file (again: nothing). */
  close(): void {
    for (const fd of this.fds) {
      if (fd === undefined) continue;
      try {
        fs.closeSync(fd);
      } catch {
        /* already closed: nothing held */
      }
    }
    this.fds = [];
  }

  /** Files held open now. */
  get openFiles(): number {
    return this.fds.filter((fd) => fd !== undefined).length;
  }
}

/**
 * Why the cgroup at `dir` is over, as the kernel says: removed, or empty (cgroup.events
 * `populated 0`: no process left in it or below it; systemd stops such a scope). Undefined while
 * it holds processes.
 */
export function cgroupOver(dir: string): string | undefined {
  try {
    const events = parseFlatKeyed(readCgroupFile(dir, 'cgroup.events'), path.join(dir, 'cgroup.events'));
    return events.populated === 0 ? 'empty (cgroup.events: populated 0)' : undefined;
  } catch (err) {
    if (err instanceof CgroupGoneError) return 'gone (its cgroup was removed)';
    throw err;
  }
}
