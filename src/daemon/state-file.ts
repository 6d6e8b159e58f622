/**
 * What must survive a restart of sbd (design: a restart during a running deadline neither
 * forgets it nor acts twice): per session (unit and invocation id), the running deadline, the
 * brake it had before we raised it, the stop under way (to be finished by the next sbd), and the
 * freeze signals told and not recovered yet (whose recovery the next sbd tells).
 * Each entry is checked on load (a bad one is set aside, the rest kept); written atomically and
 * durably (fsync of the file before the rename, of the directory after).
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { z } from 'zod';
import type { SavedFreeze } from '../freeze/policy';
import type { Deadline } from '../stall/detector';
import { writeDurably } from '../util/durable';
import { xdgHome } from '../util/xdg';

/** A process as it was signalled: a pid alone may have been reused by a stranger since. */
export interface SignalledProcess {
  pid: number;
  /** Start time after boot in clock ticks (/proc/<pid>/stat field 22). */
  startTicks: number;
  uid: number;
}

/** A stop between SIGTERM and SIGKILL: what a restarted sbd needs to finish it. */
export interface SavedStop {
  /** The command's display name (its heaviest process's comm). */
  name: string;
  /** What was sent SIGTERM, deepest first. */
  processes: SignalledProcess[];
  /** When SIGKILL is due (actions/kill-due.ts: dueAtMs). */
  killDueAtMs: number;
  /** The session's brake, to be in force again once the stop is over. */
  brakeBytes: number;
}

export interface SavedSession {
  invocationId: string;
  /**
   * The boot whose CLOCK_MONOTONIC the times of this record are on (util/clock.ts); absent in
   * records of an older sbd, whose times were the wall clock's (daemon/saved-deadline.ts).
   */
  bootId?: string;
  /** Its times are CLOCK_MONOTONIC ms of boot `bootId`. */
  deadline?: Deadline;
  /** MemoryHigh before our first raise; absent when we did not raise. */
  originalHigh?: number;
  /** A stop was under way: after a restart it is not started again. */
  stopping?: boolean;
  /** The stop under way, once its processes were signalled: a restarted sbd finishes it. */
  stop?: SavedStop;
  /** The freeze signals told and not yet recovered: a restarted sbd tells their recovery. */
  freeze?: SavedFreeze;
}

export type SavedState = Record<string, SavedSession>;

// Brakes are bytes or "infinity" (JSON has no Infinity).
const bytes = z.union([z.number().nonnegative(), z.literal('infinity').transform(() => Infinity)]);
const count = z.number().int().nonnegative();
const savedSessionSchema = z.object({
  invocationId: z.string().min(1),
  bootId: z.string().min(1).optional(),
  deadline: z.object({ startedAtMs: z.number(), endsAtMs: z.number(), currentAtStart: bytes }).optional(),
  originalHigh: bytes.optional(),
  stopping: z.boolean().optional(),
  stop: z
    .object({
      name: z.string(),
      processes: z.array(z.object({ pid: count.min(1), startTicks: count, uid: count })),
      killDueAtMs: z.number(),
      brakeBytes: bytes,
    })
    .optional(),
});
// Checked apart: a freeze part this sbd cannot read (a newer sbd's signal, say) is dropped alone,
// never the deadline or the stop under way beside it.
const savedFreezeSchema = z.object({
  open: z.array(z.enum(['pegged', 'missing', 'silent'])).min(1),
  busySinceMs: z.number().optional(),
});

/** $XDG_STATE_HOME/sessionbrake/state.json (default ~/.local/state). */
export function defaultStatePath(env: NodeJS.ProcessEnv = process.env): string {
  return path.join(xdgHome('state', env), 'sessionbrake', 'state.json');
}

/** Keep what cannot be used in FILE.bad for a post-mortem rather than losing it. */
function setAside(keep: () => void): void {
  try {
    keep();
  } catch {
    /* nothing to keep */
  }
}

export function loadState(file: string, onBad: (why: string) => void): SavedState {
  let text: string;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') onBad(`cannot read ${file}: ${(err as Error).message}`);
    return {};
  }
  let v: unknown;
  try {
    v = JSON.parse(text);
  } catch (err) {
    onBad(`${file}: not valid JSON (${(err as Error).message}); starting afresh, the file is kept as ${file}.bad`);
    setAside(() => fs.renameSync(file, `${file}.bad`));
    return {};
  }
  if (v === null || typeof v !== 'object' || Array.isArray(v)) {
    onBad(`${file}: not an object; starting afresh, the file is kept as ${file}.bad`);
    setAside(() => fs.renameSync(file, `${file}.bad`));
    return {};
  }
  const state: SavedState = {};
  const bad: Record<string, unknown> = {};
  const issues = (e: z.ZodError): string => e.issues.map((i) => `${i.path.length ? i.path.join('.') : 'the entry'}: ${i.message}`).join('; ');
  for (const [unit, entry] of Object.entries(v)) {
    const r = savedSessionSchema.safeParse(entry);
    if (r.success) {
      const saved = r.data as SavedSession;
      const freeze = (entry as { freeze?: unknown }).freeze;
      if (freeze !== undefined) {
        const f = savedFreezeSchema.safeParse(freeze);
        if (f.success) saved.freeze = f.data.busySinceMs === undefined ? { open: f.data.open } : { open: f.data.open, busySinceMs: f.data.busySinceMs };
        else {
          bad[unit] = { freeze };
          onBad(`${file}: entry "${unit}": its freeze signals are dropped (freeze.${issues(f.error)}); the rest of it is kept, kept in ${file}.bad`);
        }
      }
      state[unit] = saved;
      continue;
    }
    bad[unit] = entry;
    onBad(`${file}: entry "${unit}" set aside (${issues(r.error)}); kept in ${file}.bad, that session starts afresh`);
  }
  if (Object.keys(bad).length > 0) setAside(() => fs.writeFileSync(`${file}.bad`, `${JSON.stringify(bad)}\n`, { mode: 0o600 }));
  return state;
}

export function saveState(file: string, state: SavedState): void {
  writeDurably(file, `${JSON.stringify(state, (_k, v: unknown) => (v === Infinity ? 'infinity' : v))}\n`);
}
