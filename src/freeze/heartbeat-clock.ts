/**
 * When a heartbeat was written, on the monotonic clock (pure). A heartbeat file's mtime is a
 * wall-clock time: after a step of the wall clock, "now - mtime" is off by the step (15 minutes
 * forward and every agent is "missing" at once; back, and none is for 15 minutes). So a write is
 * dated by when the watch saw the mtime change (inotify makes it look at once; its timer within
 * freeze.checkS), and the wall clock's own "written so long ago" is trusted only within the span
 * since the previous look, which the monotonic clock measures. The first look (sbd just started)
 * can only take the wall clock's word.
 */

export interface BeatSeen {
  /** The file's mtime when last looked at (wall clock ms; only compared for a change). */
  mtimeMs: number;
  /** When it was written: monotonic ms. */
  writtenAtMs: number;
  /** When the watch last looked: monotonic ms. */
  lookedAtMs: number;
}

export function beatSeen(prev: BeatSeen | undefined, mtimeMs: number, wallNowMs: number, nowMs: number): BeatSeen {
  if (prev !== undefined && prev.mtimeMs === mtimeMs) return { ...prev, lookedAtMs: nowMs };
  const wallAgeMs = Math.max(0, wallNowMs - mtimeMs);
  const ageMs = prev === undefined ? wallAgeMs : Math.min(wallAgeMs, Math.max(0, nowMs - prev.lookedAtMs));
  return { mtimeMs, writtenAtMs: nowMs - ageMs, lookedAtMs: nowMs };
}
