/**
 * The machine as the outermost slice: its MemAvailable against the reserve and the critical line.
 * Measured in the guest (2 GiB, no swap, a session without a brake growing 65 MiB/s): PSI stayed
 * at 0 until MemAvailable was 25 MiB, then the machine thrashed for 40 s and the kernel OOM-killed
 * the session's process. Pressure comes too late here, so the machine is read on a timer whose
 * period is the time RAM would take to fill up to the critical line at the fastest plausible rate
 * (short when little is left, long when much is); a PSI trigger on /proc/pressure/memory, where
 * the kernel allows it, wakes it at once too. With no session to protect it does not run.
 */
import { PsiTrigger } from '../native';
import { readMeminfo } from '../proc/meminfo';

/** How fast RAM can fill: earlyoom's figure (6000 MiB/s), about one core faulting in fresh pages. */
export const FASTEST_FILL_BYTES_PER_S = 6000 * 2 ** 20;
/** Never read /proc/meminfo more often than this: a read costs ~20 µs, a wake-up more. */
export const MIN_CHECK_MS = 100;
/** Nor less often than this when far from the line: the watchdog's own period (sbd.service). */
export const MAX_CHECK_MS = 15_000;

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

/** When to look again (pure): the time the fastest fill takes to reach the critical line. */
export function nextCheckMs(availableBytes: number, totalBytes: number, l: MachineLines): number {
  const gap = availableBytes - l.criticalAvailableShare * totalBytes;
  return Math.min(MAX_CHECK_MS, Math.max(MIN_CHECK_MS, (gap / FASTEST_FILL_BYTES_PER_S) * 1000));
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
  /** Why the kernel's pressure trigger is not used, when it is not. */
  triggerProblem: string | undefined;

  constructor(
    private readonly lines: MachineLines,
    /** Every reading that is not 'ok', and the first 'ok' after one that was not. */
    private readonly onLevel: (r: MachineReading) => void,
    private readonly log: (msg: string, fields: Record<string, unknown>) => void,
    /** Every reading (the slices note their members' sizes on it). */
    private readonly onTick: (r: MachineReading) => void = () => {},
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
    this.last = reading;
    this.onTick(reading);
    if (reading.level !== 'ok' || was !== 'ok') this.onLevel(reading);
    this.timer = setTimeout(() => this.check(), nextCheckMs(reading.availableBytes, reading.totalBytes, this.lines));
    this.timer.unref();
    return reading;
  }
}
