/**
 * The machine as the outermost slice: its MemAvailable against the reserve and the critical line.
 * Measured in the guest (2 GiB, no swap, a session without a brake growing 65 MiB/s): PSI stayed
 * at 0 until MemAvailable was 25 MiB, then the machine thrashed for 40 s and the kernel OOM-killed
 * the session's process. Pressure comes too late here, so the machine is read on a timer too.
 * Within reach of the line (MemAvailable under the reserve: the machine is short) the timer's
 * period is the time RAM would take to fill up to the critical line at the fastest plausible rate.
 * Above the reserve it is the time RAM would take to reach the reserve at four times the fill seen
 * since the last reading, at most 15 s: an idle machine is read four times a minute whatever its
 * size (issue 15; the fastest-fill pace alone read a 2 GiB guest four times a second, most of
 * sbd's idle wakeups). What that gives up: a fill that starts from nothing faster than the room
 * above the reserve in 15 s is seen late, by the next reading or by the PSI trigger on
 * /proc/pressure/memory, which wakes the watch at once when the machine starts to thrash. With no
 * session to protect it does not run.
 */
import { PsiTrigger } from '../native';
import { readMeminfo } from '../proc/meminfo';
import { monotonicMs } from '../util/clock';

/** How fast RAM can fill: earlyoom's figure (6000 MiB/s), about one core faulting in fresh pages. */
export const FASTEST_FILL_BYTES_PER_S = 6000 * 2 ** 20;
/** Never read /proc/meminfo more often than this: a read costs ~20 µs, a wake-up more. */
export const MIN_CHECK_MS = 100;
/** Nor less often than this when far from the line: the watchdog's own period (sbd.service). */
export const MAX_CHECK_MS = 15_000;
/** Above the reserve, the fill seen since the last reading is assumed to grow this much before
 * the next one: a build that speeds up (a link step after compiles) is still read before it
 * crosses the reserve. */
export const FILL_GROWTH_ALLOWANCE = 4;

export type MachineLevel = 'ok' | 'short' | 'critical';

export interface MachineLines {
  reserveBytes: number;
  criticalAvailableShare: number;
}

/** The machine's level from MemAvailable (pure). */
export function machineLevel(availableBytes: number, totalBytes: number, l: MachineLines): MachineLevel {
  if (availableBytes < l.criticalAvailableShare * totalBytes) return 'critical';
  return availableBytes < l.reserveBytes ? 'short' : 'ok';
}

/**
 * When to look again (pure). Under the reserve: the time the fastest fill takes to reach the
 * critical line. Above it: the time the fill seen since the last reading (`fillBytesPerS`, 0 when
 * none or when memory came back), four times faster, takes to reach the reserve. Within 100 ms
 * and 15 s.
 */
export function nextCheckMs(availableBytes: number, totalBytes: number, l: MachineLines, fillBytesPerS = 0): number {
  const bounded = (ms: number): number => Math.min(MAX_CHECK_MS, Math.max(MIN_CHECK_MS, ms));
  if (availableBytes < l.reserveBytes) return bounded(((availableBytes - l.criticalAvailableShare * totalBytes) / FASTEST_FILL_BYTES_PER_S) * 1000);
  const fill = FILL_GROWTH_ALLOWANCE * Math.max(0, fillBytesPerS);
  return fill === 0 ? MAX_CHECK_MS : bounded(((availableBytes - l.reserveBytes) / fill) * 1000);
}

/** How fast MemAvailable fell between two readings, in bytes a second (pure); 0 when it rose. */
export function fillRate(before: { availableBytes: number; atMs: number } | undefined, now: { availableBytes: number; atMs: number }): number {
  if (before === undefined || now.atMs <= before.atMs) return 0;
  return Math.max(0, ((before.availableBytes - now.availableBytes) * 1000) / (now.atMs - before.atMs));
}

export interface MachineReading {
  level: MachineLevel;
  availableBytes: number;
  totalBytes: number;
}

export class MachineWatch {
  private timer: NodeJS.Timeout | undefined;
  private trigger: PsiTrigger | undefined;
  last: MachineReading | undefined;
  /** When `last` was read (monotonic ms): the fill rate is measured between readings. */
  private lastAtMs = 0;
  /** Why the kernel's pressure trigger is not used, when it is not. */
  triggerProblem: string | undefined;

  constructor(
    private readonly lines: MachineLines,
    /** Every reading that is not 'ok', and the first 'ok' after one that was not. */
    private readonly onLevel: (r: MachineReading) => void,
    private readonly log: (msg: string, fields: Record<string, unknown>) => void,
  ) {}

  get running(): boolean {
    return this.timer !== undefined;
  }

  start(): void {
    if (this.running) return;
    try {
      // some 100 ms of a 2 s window: the thrash before an OOM kill shows as seconds of it
      this.trigger = PsiTrigger.arm('/proc/pressure/memory', { kind: 'some', stallUs: 100_000, windowUs: 2_000_000 }, (kind) => {
        if (kind === 'fired') this.check();
      });
      this.trigger.unref();
    } catch (err) {
      this.triggerProblem = (err as Error).message;
    }
    this.check();
  }

  stop(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    this.trigger?.close();
    this.trigger = undefined;
  }

  /** Read MemAvailable now, tell what matters, and plan the next reading. */
  check(): MachineReading | undefined {
    if (this.timer) clearTimeout(this.timer);
    let reading: MachineReading;
    try {
      const m = readMeminfo();
      reading = { level: machineLevel(m.availableBytes, m.totalBytes, this.lines), availableBytes: m.availableBytes, totalBytes: m.totalBytes };
    } catch (err) {
      this.log('cannot read /proc/meminfo: the machine is not watched', { err });
      this.timer = undefined;
      return undefined;
    }
    const was = this.last?.level ?? 'ok';
    const atMs = monotonicMs();
    const fill = fillRate(this.last && { availableBytes: this.last.availableBytes, atMs: this.lastAtMs }, { availableBytes: reading.availableBytes, atMs });
    this.last = reading;
    this.lastAtMs = atMs;
    if (reading.level !== 'ok' || was !== 'ok') this.onLevel(reading);
    this.timer = setTimeout(() => this.check(), nextCheckMs(reading.availableBytes, reading.totalBytes, this.lines, fill));
    this.timer.unref();
    return reading;
  }
}
