/**
 * The freeze watch (design.md §6), a pure function of (state, observation, config): three
 * signals about a session whose agent is alive but not getting anywhere, each told once per
 * incident, again when another signal joins, when the session recovers, and as a reminder. It
 * never stops anything.
 *  - pegged: the AGENT process (not its builds) used ≥ peggedCpuShare of a core in every
 *    interval for peggedForS in a row (none of them calm), while its heartbeat was not written;
 *  - missing: the agent is alive, but its heartbeat was not renewed for missingAfterS;
 *  - silent: it claims to be working, its heartbeat was not written for silentAfterS, and nothing
 *    it waits on is open (MCP and language servers are not commands). Silent says more than
 *    missing (work claimed, no progress, nothing running) and takes its place: a session is told
 *    as one or the other, never both.
 *
 * Times are monotonic (atMs). The heartbeat's mtime is wall-clock by nature: its age is taken
 * from the wall clock only when first seen and when the file was written; between writes it
 * grows with the monotonic clock, so a step of the wall clock neither ages nor renews it.
 */
import type { Config } from '../config/schema';

export type FreezeSignal = 'pegged' | 'missing' | 'silent';

export interface Heartbeat {
  /** The file's mtime (wall clock): a change means it was written (or touched). */
  mtimeMs: number;
  /** Wall-clock now minus mtimeMs. */
  ageMs: number;
}

export interface Observation {
  /** Monotonic time of the observation. */
  atMs: number;
  /** The agent's own CPU time (utime + stime of its /proc stat, its children not included);
   * undefined when the agent is gone (exited, a zombie, or its pid now names another process). */
  agentCpuMs: number | undefined;
  /** The heartbeat file; undefined when the session has none or it is missing. */
  heartbeat: Heartbeat | undefined;
  /** The heartbeat file's first word is "working". */
  claimsWorking: boolean;
  /** Commands the agent started and waits on (not MCP or language servers). Read only when
   * processViewNeeded says so; otherwise any value gives the same step. */
  commandsOpen: number;
}

export interface FreezeState {
  last: Observation | undefined;
  /** The start of the interval the agent's CPU share is measured over (short checks add up). */
  cpuFrom: { atMs: number; cpuMs: number } | undefined;
  /** The agent's share of a core over the last measured interval. */
  share: number | undefined;
  /** Since when every interval has been busy (≥ peggedCpuShare); undefined after a calm one. */
  busySinceMs: number | undefined;
  /** The heartbeat's age at the last observation, as counted here (see the file's comment). */
  beatAgeMs: number | undefined;
  open: FreezeSignal[];
  lastToldMs: number;
}

/** What a person is told with a signal or a reminder. */
export interface FreezeFacts {
  /** The agent's share of a core over the last measured interval; undefined before one was. */
  share: number | undefined;
  /** How long the agent has been busy in a row; undefined when it is not. */
  busyForMs: number | undefined;
  /** The heartbeat's age; undefined when there is none. */
  beatAgeMs: number | undefined;
}

export type Telling =
  | { kind: 'signal'; signal: FreezeSignal; open: FreezeSignal[]; facts: FreezeFacts }
  | { kind: 'reminder'; open: FreezeSignal[]; facts: FreezeFacts }
  | { kind: 'recovered'; was: FreezeSignal[] };

export const initialFreeze = (): FreezeState => ({ last: undefined, cpuFrom: undefined, share: undefined, busySinceMs: undefined, beatAgeMs: undefined, open: [], lastToldMs: 0 });

/**
 * What of a session's freeze state survives a restart of sbd: the signals told and not recovered
 * yet, and since when its agent has been busy (monotonic ms of the boot the record names).
 */
export interface SavedFreeze {
  open: FreezeSignal[];
  busySinceMs?: number;
}

/**
 * The part of `state` a restart must keep; undefined when nothing is open (pure). The busy streak
 * only while pegged is open: then a calm interval closes pegged, and so saves again, and the
 * streak saved is never stale; with pegged not open it may have ended since.
 */
export function savedFreezeOf(state: FreezeState): SavedFreeze | undefined {
  if (state.open.length === 0) return undefined;
  const since = state.open.includes('pegged') ? state.busySinceMs : undefined;
  return since === undefined ? { open: [...state.open] } : { open: [...state.open], busySinceMs: since };
}

/**
 * The state of a session after a restart, from what its predecessor saved (pure). Its signals stay
 * open: the first check tells nothing again when they still hold, and tells the recovery when not
 * (missing and silent are judged on the heartbeat at once). Pegged goes on from its busy streak,
 * on this boot only (`sameBoot`: the times are this boot's monotonic clock), the time sbd was down
 * counted as busy; a streak it cannot trust (another boot's, one from the future, none saved)
 * is taken as just long enough (`peggedForMs`). Either way only a measured calm interval ends it,
 * never the first check, which has no interval yet. Reminders count from `nowMs`.
 */
export function restoredFreeze(saved: SavedFreeze, sameBoot: boolean, nowMs: number, peggedForMs: number): FreezeState {
  let busySinceMs: number | undefined;
  if (saved.open.includes('pegged')) {
    const trusted = sameBoot && saved.busySinceMs !== undefined && saved.busySinceMs <= nowMs;
    busySinceMs = trusted ? saved.busySinceMs : nowMs - peggedForMs;
  }
  return { ...initialFreeze(), open: [...saved.open], busySinceMs, lastToldMs: nowMs };
}

type FreezeConfig = Config['freeze'];

/** The heartbeat's age at `o`, counted on from the state (see the file's comment). */
export function heartbeatAge(state: FreezeState, o: Pick<Observation, 'atMs' | 'heartbeat'>): number | undefined {
  if (o.heartbeat === undefined) return undefined;
  const wallAge = Math.max(0, o.heartbeat.ageMs);
  const prev = state.last;
  if (prev?.heartbeat === undefined || state.beatAgeMs === undefined) return wallAge; // first sight
  const sinceLast = Math.max(0, o.atMs - prev.atMs);
  if (o.heartbeat.mtimeMs === prev.heartbeat.mtimeMs) return state.beatAgeMs + sinceLast; // not written since
  return Math.min(wallAge, sinceLast); // written since the last look
}

/**
 * Whether the step needs the open commands: only for silent, so only once the heartbeat claims
 * work and is older than silentAfterS; the watch reads the process table only then.
 */
export function processViewNeeded(state: FreezeState, o: Pick<Observation, 'atMs' | 'heartbeat' | 'claimsWorking'>, cfg: FreezeConfig): { commands: boolean } {
  const age = heartbeatAge(state, o);
  return { commands: o.claimsWorking && age !== undefined && age >= cfg.silentAfterS * 1000 };
}

export function freezeStep(state: FreezeState, o: Observation, cfg: FreezeConfig): [FreezeState, Telling[]] {
  const alive = o.agentCpuMs !== undefined;
  let { cpuFrom, share, busySinceMs } = state;
  if (o.agentCpuMs === undefined) {
    cpuFrom = undefined; // the agent is gone: nothing spins
    share = undefined;
    busySinceMs = undefined;
  } else if (cpuFrom === undefined || o.atMs < cpuFrom.atMs || o.agentCpuMs < cpuFrom.cpuMs) {
    cpuFrom = { atMs: o.atMs, cpuMs: o.agentCpuMs };
  } else if (o.atMs - cpuFrom.atMs >= (cfg.checkS * 1000) / 2) {
    // An interval shorter than half a check (a check at a heartbeat's write) adds to the next:
    // CPU time comes in clock ticks, and a short interval would read 0 % or 200 %.
    share = (o.agentCpuMs - cpuFrom.cpuMs) / (o.atMs - cpuFrom.atMs);
    busySinceMs = share >= cfg.peggedCpuShare ? (busySinceMs ?? cpuFrom.atMs) : undefined; // a calm interval starts over
    cpuFrom = { atMs: o.atMs, cpuMs: o.agentCpuMs };
  }
  const beatAgeMs = heartbeatAge(state, o);
  const busyForMs = busySinceMs === undefined ? undefined : o.atMs - busySinceMs;

  const now = new Set<FreezeSignal>();
  if (busyForMs !== undefined && busyForMs >= cfg.peggedForS * 1000 && (beatAgeMs === undefined || beatAgeMs >= busyForMs)) now.add('pegged');
  const stale = (limitS: number): boolean => alive && beatAgeMs !== undefined && beatAgeMs >= limitS * 1000;
  if (stale(cfg.silentAfterS) && o.claimsWorking && o.commandsOpen === 0) now.add('silent');
  else if (stale(cfg.missingAfterS)) now.add('missing');

  const open = (['pegged', 'missing', 'silent'] as const).filter((s) => now.has(s));
  const facts: FreezeFacts = { share, busyForMs, beatAgeMs };
  const tell: Telling[] = [];
  let lastToldMs = state.lastToldMs;
  for (const s of open) {
    if (!state.open.includes(s)) tell.push({ kind: 'signal', signal: s, open, facts });
  }
  if (open.length === 0 && state.open.length > 0) tell.push({ kind: 'recovered', was: state.open });
  if (tell.length === 0 && open.length > 0 && o.atMs - lastToldMs >= cfg.reminderS * 1000) tell.push({ kind: 'reminder', open, facts });
  if (tell.length > 0) lastToldMs = o.atMs;
  return [{ last: o, cpuFrom, share, busySinceMs, beatAgeMs, open, lastToldMs }, tell];
}
