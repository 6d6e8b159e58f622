/**
 * What one incident adds to sbd's counters (pure). Every action of sbd is told through
 * Incidents.tell, so one listener there counts them: verdicts, raises, lowerings, stops, leftovers
 * reaped, freeze incidents, kernel OOM kills. An incident told in observe-only mode is a would-be
 * action: it counts as a verdict, never as an action done.
 */
import type { Incident, IncidentType } from '../daemon/incidents';

/** The incident types that are verdicts (sessionbrake_verdicts_total's `verdict` label). */
export const VERDICT_TYPES = ['standing-still', 'cleared', 'slice-standing-still', 'slice-cleared', 'culprit', 'machine-short'] as const satisfies readonly IncidentType[];
export type VerdictType = (typeof VERDICT_TYPES)[number];

export const BRAKE_SCOPES = ['session', 'slice'] as const;
export type BrakeScope = (typeof BRAKE_SCOPES)[number];

export const STOP_REASONS = ['own-brake', 'slice-culprit', 'machine-short'] as const;
export type StopReason = (typeof STOP_REASONS)[number];

export const FREEZE_KINDS = ['pegged', 'missing', 'silent'] as const satisfies readonly IncidentType[];
export type FreezeKind = (typeof FREEZE_KINDS)[number];

/** One counter step. */
export type Increment =
  | { counter: 'verdicts'; labels: { verdict: VerdictType }; by: number }
  | { counter: 'brakeRaises'; labels: { scope: BrakeScope }; by: number }
  | { counter: 'brakeLowerings'; labels: { scope: BrakeScope }; by: number }
  | { counter: 'stops'; labels: { reason: StopReason }; by: number }
  | { counter: 'leftoversReaped'; labels: Record<string, never>; by: number }
  | { counter: 'freezeIncidents'; labels: { kind: FreezeKind }; by: number }
  | { counter: 'oomKills'; labels: Record<string, never>; by: number };

const isVerdict = (t: IncidentType): t is VerdictType => (VERDICT_TYPES as readonly string[]).includes(t);
const isFreeze = (t: IncidentType): t is FreezeKind => (FREEZE_KINDS as readonly string[]).includes(t);

/**
 * Why a stop was made, from the figures the controller told with it: a slice's verdict on its
 * culprit carries the slice (and `critical` when the machine was nearly out of memory); a
 * session's own evidence carries none.
 */
export function stopReason(i: Incident): StopReason {
  if (typeof i.slice !== 'string') return 'own-brake';
  return i.critical === true ? 'machine-short' : 'slice-culprit';
}

/** Processes a procs-reaped incident stopped: those ended by SIGTERM or SIGKILL (not those that survived or were gone already). */
function reapedCount(i: Incident): number {
  if (!Array.isArray(i.procs)) return 0;
  return i.procs.filter((p: unknown) => {
    const outcome = (p as { outcome?: unknown } | null)?.outcome;
    return outcome === 'terminated' || outcome === 'killed';
  }).length;
}

/** The counter steps of one incident (pure). */
export function incrementsFor(i: Incident): Increment[] {
  const out: Increment[] = [];
  if (isVerdict(i.type)) out.push({ counter: 'verdicts', labels: { verdict: i.type }, by: 1 });
  // A freeze incident told again as a reminder is the same incident: counted once.
  if (isFreeze(i.type) && i.reminder !== true) out.push({ counter: 'freezeIncidents', labels: { kind: i.type }, by: 1 });
  if (i.type === 'oom-kill') {
    // the kernel killed, whatever sbd's mode: observed, not done by sbd
    const count = typeof i.count === 'number' && Number.isInteger(i.count) && i.count > 0 ? i.count : 1;
    out.push({ counter: 'oomKills', labels: {}, by: count });
  }
  if (i.observeOnly) return out; // would-be actions: not done
  switch (i.type) {
    case 'brake-raised':
      out.push({ counter: 'brakeRaises', labels: { scope: 'session' }, by: 1 });
      break;
    case 'slice-brake-raised':
      out.push({ counter: 'brakeRaises', labels: { scope: 'slice' }, by: 1 });
      break;
    case 'brake-lowered':
      out.push({ counter: 'brakeLowerings', labels: { scope: 'session' }, by: 1 });
      break;
    case 'subtree-stopped':
      // told once the stop is done (SIGTERM, SIGKILL after the grace): one stop, whatever it took
      out.push({ counter: 'stops', labels: { reason: stopReason(i) }, by: 1 });
      break;
    case 'procs-reaped': {
      const n = reapedCount(i);
      if (n > 0) out.push({ counter: 'leftoversReaped', labels: {}, by: n });
      break;
    }
    default:
      break;
  }
  return out;
}
