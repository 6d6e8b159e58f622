/**
 * When and how far to raise a stalled session's brake, and how to lower it back (pure).
 * design: never closer to its MemoryMax than a margin (MemoryMax is a wall, not a target: a
 * brake at the wall lets the kernel's OOM killer act before sbd can), never beyond the slice's
 * collective brake minus what the other sessions hold, never beyond MemAvailable minus a
 * reserve; steps and ceiling from config.
 */

export interface RaiseInput {
  highBytes: number;
  maxBytes: number;
  currentBytes: number;
  /** The slice's own MemoryHigh (Infinity when none) and what the other sessions of it hold. */
  sliceHighBytes: number;
  othersBytes: number;
  /** /proc/meminfo MemAvailable. */
  memAvailableBytes: number;
  step: number;
  ceiling: number;
  reserve: number;
  /** Kept between a raised brake and MemoryMax (config raise.maxMargin). */
  maxMargin: number;
  /** The kernel's page size (proc/system systemPageSize); 4096 when not given. */
  pageBytes?: number;
}

/** Down to whole pages: the kernel keeps memory.high in pages. */
export const wholePages = (bytes: number, pageBytes: number): number => Math.floor(bytes / pageBytes) * pageBytes;

export type RaisePlan =
  | { raise: true; toBytes: number; limitedBy: string }
  | { raise: false; why: string };

/** A raise smaller than this is no help: say there is no room instead. */
export const SMALLEST_USEFUL_RAISE = 16 * 2 ** 20;

export function planRaise(i: RaiseInput): RaisePlan {
  const bounds: Array<[string, number]> = [
    ['step', i.highBytes + i.step],
    ['MemoryMax minus the margin', i.maxBytes - i.maxMargin],
    ['configured ceiling', i.ceiling],
    ["the slice's brake minus the other sessions", i.sliceHighBytes - i.othersBytes],
    ['MemAvailable minus the reserve', i.currentBytes + i.memAvailableBytes - i.reserve],
  ];
  let [limitedBy, to] = bounds[0] as [string, number];
  for (const [name, value] of bounds) {
    if (value < to) [limitedBy, to] = [name, value];
  }
  to = wholePages(to, i.pageBytes ?? 4096);
  if (to - i.highBytes < SMALLEST_USEFUL_RAISE) {
    return { raise: false, why: `no room: ${limitedBy} allows ${Math.max(0, Math.round((to - i.highBytes) / 2 ** 20))} MiB more` };
  }
  return { raise: true, toBytes: to, limitedBy };
}

/**
 * The brake while a command is being stopped: lifted (older kernels can leave a SIGKILLed task
 * stuck in memory.high reclaim), but only up to MemoryMax minus the margin, so that the command
 * cannot run into the wall and be OOM-killed (taking the session with it) before our signal
 * lands; never below the brake it has.
 */
export function liftForStop(highBytes: number, maxBytes: number, maxMargin: number, pageBytes = 4096): number {
  if (maxBytes === Infinity) return Infinity;
  return Math.max(highBytes, wholePages(maxBytes - maxMargin, pageBytes));
}

/** One step back towards the brake the session had before we raised it. */
export function planLower(currentHighBytes: number, originalHighBytes: number, step: number): number | undefined {
  if (currentHighBytes <= originalHighBytes) return undefined;
  return Math.max(originalHighBytes, currentHighBytes - step);
}
