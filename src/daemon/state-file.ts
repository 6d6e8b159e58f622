/**
 * What must survive a restart of sbd (design: a restart during a running deadline neither
 * forgets it nor acts twice): per session (unit and invocation id), the running deadline, the
 * brake it had before we raised it, and whether a stop was under way. Written atomically.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { Deadline } from '../stall/detector';

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
}

export type SavedState = Record<string, SavedSession>;

/** $XDG_STATE_HOME/sessionbrake/state.json (default ~/.local/state). */
export function defaultStatePath(env: NodeJS.ProcessEnv = process.env): string {
  const base = env.XDG_STATE_HOME && env.XDG_STATE_HOME !== '' ? env.XDG_STATE_HOME : path.join(os.homedir(), '.local', 'state');
  return path.join(base, 'sessionbrake', 'state.json');
}

export function loadState(file: string, onBad: (why: string) => void): SavedState {
  let text: string;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') onBad(`cannot read ${file}: ${(err as Error).message}`);
    return {};
  }
  try {
    const v: unknown = JSON.parse(text, (_k, x: unknown) => (x === 'infinity' ? Infinity : x));
    if (v !== null && typeof v === 'object' && !Array.isArray(v)) return v as SavedState;
    onBad(`${file}: not an object; starting afresh`);
  } catch (err) {
    onBad(`${file}: not valid JSON (${(err as Error).message}); starting afresh`);
  }
  // keep the bad file for a post-mortem rather than losing it
  try {
    fs.renameSync(file, `${file}.bad`);
  } catch {
    /* nothing to keep */
  }
  return {};
}

export function saveState(file: string, state: SavedState): void {
  fs.mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 });
  const tmp = `${file}.${process.pid}.tmp`;
  fs.writeFileSync(tmp, `${JSON.stringify(state, (_k, v: unknown) => (v === Infinity ? 'infinity' : v))}\n`, { mode: 0o600 });
  fs.renameSync(tmp, file);
}
