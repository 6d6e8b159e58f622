/**
 * Stopping the chosen subtree (design.md §5): the brake lifted first (older kernels can leave a
 * SIGKILLed task stuck in memory.high reclaim; never up to MemoryMax, see liftForStop), then
 * terminate() deepest first, then the brake restored.
 */
import type { Candidate } from '../victim/choose';
import { type Held, type Outcome, terminate } from './terminate';

export interface StopDeps {
  /** Set the session's MemoryHigh (Infinity lifts it). */
  setBrake(bytes: number): Promise<void>;
  /** The brake while stopping (brake-policy liftForStop: below MemoryMax by the margin). */
  liftBytes: number;
  termToKillMs: number;
  log(msg: string, fields: Record<string, unknown>): void;
}

export interface StopReport {
  name: string;
  rssBytes: number;
  /** Exited after SIGTERM. */
  terminated: number[];
  /** Needed SIGKILL. */
  killed: number[];
  /** Not signalled: gone before we got to it, or no longer the process chosen. */
  skipped: number[];
  /** Still there after SIGKILL (stuck in the kernel). */
  survived: number[];
}

export async function stopSubtree(candidate: Candidate, held: Held, brakeBytes: number, deps: StopDeps): Promise<StopReport> {
  await deps.setBrake(deps.liftBytes).catch((err: unknown) => deps.log('could not lift the brake before stopping', { err: String(err) }));
  let outcome: Map<number, Outcome>;
  try {
    outcome = await terminate(held, deps.termToKillMs);
  } finally {
    await deps.setBrake(brakeBytes).catch((err: unknown) => deps.log('could not restore the brake after stopping', { err: String(err) }));
  }
  const having = (o: Outcome): number[] => candidate.pids.filter((pid) => outcome.get(pid) === o);
  return { name: candidate.name, rssBytes: candidate.rssBytes, terminated: having('terminated'), killed: having('killed'), skipped: having('skipped'), survived: having('survived') };
}
