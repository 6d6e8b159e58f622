/**
 * The freeze watch (design.md §6), a pure function of (state, observation, config): three
 * signals about a session that is alive but not getting anywhere, each told once per incident,
 * again when another signal joins, when the session recovers, and as a reminder. It never stops
 * anything.
 *  - pegged: ≥ peggedCpuShare of a core in every check interval for peggedForS in a row (none of
 *    them calm), while the heartbeat was not written;
 *  - missing: the agent is alive, but its heartbeat was not renewed for missingAfterS;
 *  - silent: it claims to be working, its heartbeat was not written for silentAfterS, and no
 *    command is open.
 */
import type { Config } from '../config/schema';

export type FreezeSignal = 'pegged' | 'missing' | 'silent';

export interface Observation {
  atMs: number;
  /** cpu.stat usage_usec of the session's cgroup. */
  cpuUsageUs: number;
  /** When the heartbeat file was last written, on atMs's clock (freeze/heartbeat-clock.ts); undefined when the session has none or it is missing. */
  heartbeatMs: number | undefined;
  /** The heartbeat file's first word is "working". */
  claimsWorking: boolean;
  /** Processes of the session besides the agent. */
  commandsOpen: number;
  agentAlive: boolean;
}

export interface FreezeState {
  last: Observation | undefined;
  /** Since when every interval has been busy (≥ peggedCpuShare); undefined after a calm one. */
  busySinceMs: number | undefined;
  open: FreezeSignal[];
  lastToldMs: number;
}

export type Telling =
  | { kind: 'signal'; signal: FreezeSignal; open: FreezeSignal[]; reason: string }
  | { kind: 'reminder'; open: FreezeSignal[] }
  | { kind: 'recovered'; was: FreezeSignal[] };

export const initialFreeze = (): FreezeState => ({ last: undefined, busySinceMs: undefined, open: [], lastToldMs: 0 });

type FreezeConfig = Config['freeze'];

/**
 * What the step needs beyond cpu.stat and the heartbeat: whether the agent is alive (for missing
 * and silent) and how many commands are open (for silent only). Both matter only once the
 * heartbeat is older than missingAfterS or silentAfterS, so the watch reads cgroup.procs and
 * /proc only then; with a fresh heartbeat, or none, the step's answer cannot depend on them.
 */
export function processViewNeeded(heartbeatMs: number | undefined, claimsWorking: boolean, atMs: number, cfg: FreezeConfig): { agent: boolean; commands: boolean } {
  if (heartbeatMs === undefined) return { agent: false, commands: false };
  const beatAgeS = (atMs - heartbeatMs) / 1000;
  const commands = claimsWorking && beatAgeS >= cfg.silentAfterS;
  return { agent: commands || beatAgeS >= cfg.missingAfterS, commands };
}

export function freezeStep(state: FreezeState, o: Observation, cfg: FreezeConfig): [FreezeState, Telling[]] {
  const prev = state.last;
  let busySinceMs = state.busySinceMs;
  let share = 0;
  if (prev !== undefined && o.atMs > prev.atMs) {
    share = (o.cpuUsageUs - prev.cpuUsageUs) / ((o.atMs - prev.atMs) * 1000);
    busySinceMs = share >= cfg.peggedCpuShare ? (busySinceMs ?? prev.atMs) : undefined; // a calm interval starts over
  }
  const beatAgeS = o.heartbeatMs === undefined ? undefined : (o.atMs - o.heartbeatMs) / 1000;
  const reasons = new Map<FreezeSignal, string>();
  if (busySinceMs !== undefined && o.atMs - busySinceMs >= cfg.peggedForS * 1000 && (o.heartbeatMs === undefined || o.heartbeatMs < busySinceMs)) {
    reasons.set('pegged', `${Math.round(share * 100)} % of a core, busy for ${Math.round((o.atMs - busySinceMs) / 1000)} s without a heartbeat`);
  }
  if (o.agentAlive && beatAgeS !== undefined && beatAgeS >= cfg.missingAfterS) {
    reasons.set('missing', `alive, heartbeat not renewed for ${Math.round(beatAgeS)} s`);
  }
  if (o.agentAlive && o.claimsWorking && beatAgeS !== undefined && beatAgeS >= cfg.silentAfterS && o.commandsOpen === 0) {
    reasons.set('silent', `claims to be working, no heartbeat for ${Math.round(beatAgeS)} s and no command open`);
  }

  const open = (['pegged', 'missing', 'silent'] as const).filter((s) => reasons.has(s));
  const tell: Telling[] = [];
  let lastToldMs = state.lastToldMs;
  for (const s of open) {
    if (!state.open.includes(s)) tell.push({ kind: 'signal', signal: s, open, reason: reasons.get(s) ?? '' });
  }
  if (open.length === 0 && state.open.length > 0) tell.push({ kind: 'recovered', was: state.open });
  if (tell.length === 0 && open.length > 0 && o.atMs - lastToldMs >= cfg.reminderS * 1000) tell.push({ kind: 'reminder', open });
  if (tell.length > 0) lastToldMs = o.atMs;
  return [{ last: o, busySinceMs, open, lastToldMs }, tell];
}
