/**
 * `sbctl monitor gc` (issue 13), decided apart from doing it (pure): which records to archive.
 *  - corrupt: a file under the records that does not read back as a record (store.ts loadRecords);
 *  - orphan: a record whose session has ended, or whose session name now belongs to another
 *    invocation (a new session of the same name is not its owner);
 *  - finished: a monitor that ended (stopped, expired, gone) longer than FINISHED_RETENTION_MS ago.
 * A record whose unit still runs (a detached spawn outliving its session) is kept and said: gc
 * never kills anything and never touches a unit, and archiving it would leave that unit unowned.
 * Archived means moved to archive/ with why (store.ts archiveRecord), never deleted.
 */
import type { Lifecycle } from './recovery';

/** A finished monitor's record stays this long after its end: 24 h, so that an agent working
 * overnight can still `inspect` in the morning the exit receipt of what ended in the night; the
 * notice in its inbox outlives it. */
export const FINISHED_RETENTION_MS = 24 * 60 * 60 * 1000;

export interface GcView {
  id: string;
  handle: string;
  sessionId: string;
  lifecycle: Lifecycle;
  /** The session's state: its invocation is the record's ('live'), another ('replaced'), or none ('gone'). */
  session: 'live' | 'replaced' | 'gone';
  endedAtMs?: number | undefined;
  /** Its unit is active now (a spawn), as systemd says. */
  unitActive: boolean;
}

export type GcKind = 'corrupt' | 'orphan' | 'finished';

export interface GcEntry {
  kind: GcKind | 'kept';
  /** The monitor's handle, or the corrupt file's name. */
  what: string;
  id?: string | undefined;
  /** The record's file (for corrupt ones). */
  file?: string | undefined;
  why: string;
}

const hours = (ms: number): string => `${(ms / 3_600_000).toFixed(1)} h`;

/** What gc would archive (and what it keeps that looks like an orphan), in a stable order. */
export function planGc(records: readonly GcView[], corrupt: ReadonlyArray<{ file: string; why: string }>, nowMs: number, retentionMs = FINISHED_RETENTION_MS): GcEntry[] {
  const out: GcEntry[] = corrupt.map((c) => ({ kind: 'corrupt', what: c.file.split('/').at(-1) ?? c.file, file: c.file, why: `unreadable record: ${c.why}` }));
  for (const r of records) {
    const ended = r.lifecycle === 'stopped' || r.lifecycle === 'expired' || r.lifecycle === 'gone';
    if (r.session !== 'live') {
      const why = r.session === 'gone' ? `its session "${r.sessionId}" has ended` : `its session "${r.sessionId}" is another one now (a new invocation of the same name)`;
      if (r.unitActive) out.push({ kind: 'kept', what: r.handle, id: r.id, why: `${why}, but its unit still runs (detached): sbctl monitor stop --session ${r.sessionId} ${r.handle} first` });
      else out.push({ kind: 'orphan', what: r.handle, id: r.id, why });
      continue;
    }
    // an end not on record (an older sbd's) is not known to be old: such records are compacted at sbd's next start
    if (!ended || r.endedAtMs === undefined) continue;
    if (nowMs - r.endedAtMs > retentionMs) out.push({ kind: 'finished', what: r.handle, id: r.id, why: `${r.lifecycle} ${hours(nowMs - r.endedAtMs)} ago: kept ${hours(retentionMs)} after its end` });
  }
  return out;
}
