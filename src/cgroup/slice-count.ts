/**
 * How many child cgroups a slice has, read at most once per SLICE_COUNT_MAX_AGE_MS for each
 * slice. "Alone in its slice" (design.md §4, its own doing) is asked on every detector sample,
 * and a readdir of the slice per sample costs O(sessions): in a storm of 200 sessions it was 9 %
 * of sbd's CPU (bench:storm's profile, bench/RESULTS.md). The count changes only when a unit
 * comes or goes.
 */

/**
 * A second: a verdict needs three hot onset windows, 1.5 s, so its last window always sees a
 * count read after the first began: a neighbour that was there when the episode began is counted.
 */
export const SLICE_COUNT_MAX_AGE_MS = 1000;

export class SliceCounts {
  private readonly seen = new Map<string, { atMs: number; count: number | undefined }>();

  constructor(
    private readonly count: (sliceDir: string) => number | undefined,
    private readonly now: () => number,
    private readonly maxAgeMs = SLICE_COUNT_MAX_AGE_MS,
  ) {}

  /** The slice's child cgroups (undefined when it cannot be read), at most maxAgeMs old. */
  get(sliceDir: string): number | undefined {
    const now = this.now();
    const known = this.seen.get(sliceDir);
    if (known !== undefined && now - known.atMs < this.maxAgeMs && now >= known.atMs) return known.count;
    const count = this.count(sliceDir);
    this.seen.set(sliceDir, { atMs: now, count });
    return count;
  }
}
