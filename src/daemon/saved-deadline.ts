/**
 * A deadline saved across a restart of sbd, back in force (pure). Saved deadlines are times on
 * CLOCK_MONOTONIC (util/clock.ts) with the id of the boot whose clock it is (SavedSession.bootId):
 *  - the same boot: the deadline keeps running as it was, the time sbd was down included; one
 *    that ran out meanwhile expires at the first window;
 *  - another boot, an unknown boot (the kernel does not tell), or a record without a boot id (an
 *    older sbd, whose times were the wall clock's): the times mean nothing here. The deadline is
 *    dropped and that is told; if the session still stands still, hot onset windows start a new
 *    one with the whole grace (the stop comes later than announced, never sooner). Across a real
 *    reboot this cannot meet a session anyway: its scope died with the boot, and the new one has
 *    another invocation id.
 */
import type { Deadline } from '../stall/detector';
import type { SavedSession } from './state-file';

export type RestoredDeadline = { deadline: Deadline | undefined } | { dropped: string };

export function restoreDeadline(saved: SavedSession, bootId: string | undefined, nowMs: number): RestoredDeadline {
  const d = saved.deadline;
  if (d === undefined) return { deadline: undefined };
  if (saved.bootId === undefined) return { dropped: 'it was saved by an older sbd on the wall clock' };
  if (bootId === undefined) return { dropped: `this boot's id cannot be read (/proc/sys/kernel/random/boot_id), so a saved time cannot be trusted` };
  if (saved.bootId !== bootId) return { dropped: `it was saved on another boot (${saved.bootId}): its monotonic times mean nothing on this one` };
  if (d.startedAtMs > nowMs) return { dropped: `it starts ${Math.round((d.startedAtMs - nowMs) / 1000)} s in this boot's future: not a deadline this boot made` };
  return { deadline: d };
}
