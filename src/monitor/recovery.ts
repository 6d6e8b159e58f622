/**
 * What a restarted sbd does with the monitors it finds on record (issue 13), decided apart from
 * doing it (pure): files, tails and http/ssh probes resume; a local poll waits for the agent's
 * confirmation (it runs commands); a spawn is never replayed: its process lives on in its unit,
 * or it is reported gone; a monitor past its expiresAt ends; a spawn whose unit failed with
 * start-limit-hit (systemd's crash-loop fuse) is quarantined, and a quarantined spawn's unit still
 * running (sbd killed before it stopped it) is stopped; records that are corrupt or whose
 * session is gone are compacted. One summary line for the lot, not one notice per record.
 */
import type { MonitorType } from './spec';
import { CRASH_LOOP_BURST } from './unit';

export type Lifecycle = 'running' | 'suspended' | 'awaiting-confirmation' | 'quarantined' | 'stopped' | 'expired' | 'gone';

export interface RecordView {
  id: string;
  type: MonitorType;
  lifecycle: Lifecycle;
  /** epoch ms (wall clock: an absolute time people gave). */
  expiresAtMs?: number | undefined;
  /** The session it belongs to still exists. */
  sessionLive: boolean;
  /** A spawn that outlives its session (spec.detached). */
  detached?: boolean | undefined;
  /** For a spawn: its unit's state now (from systemd), undefined when the unit is gone. */
  unit?: { activeState: string; result: string; nRestarts?: number | undefined } | undefined;
}

export type RecoveryAction = 'resume' | 'reuse' | 'await-confirmation' | 'expire' | 'quarantine' | 'report-gone' | 'end-with-session' | 'stop-unit' | 'compact' | 'keep';

export interface RecoveryPlan {
  actions: Array<{ id: string; action: RecoveryAction; why: string }>;
  summary: string;
}

const unitRuns = (r: RecordView): boolean => r.unit !== undefined && (r.unit.activeState === 'active' || r.unit.activeState === 'activating' || r.unit.activeState === 'reloading');

function decide(r: RecordView, nowMs: number): { action: RecoveryAction; why: string } {
  // a detached spawn outlives its session: while its unit runs its record is kept (compacted, its unit would run on unowned)
  const outlives = r.type === 'spawn' && r.detached === true && r.lifecycle === 'running' && unitRuns(r);
  // a spawn's unit still running when its session ended while sbd was away: it ends with its session, as it would have
  // (a quarantined one too: sbd killed between its quarantine and its unit's stop left the unit restarting)
  if (!r.sessionLive && r.type === 'spawn' && (r.lifecycle === 'running' || r.lifecycle === 'quarantined') && unitRuns(r) && !outlives) return { action: 'end-with-session', why: 'its session ended while sbd was not running: stopped with it' };
  if (!r.sessionLive && !outlives) return { action: 'compact', why: 'its session has ended' };
  if (r.lifecycle === 'stopped' || r.lifecycle === 'expired' || r.lifecycle === 'gone') return { action: 'compact', why: `already ${r.lifecycle}` };
  // sbd quarantines a slow crash loop before it stops its unit: killed in between, the unit restarts on
  if (r.lifecycle === 'quarantined' && r.type === 'spawn' && unitRuns(r)) return { action: 'stop-unit', why: 'quarantined, but its unit ran on (sbd stopped before it could stop it): its unit stopped; waits for sbctl monitor recover' };
  if (r.lifecycle === 'quarantined' || r.lifecycle === 'awaiting-confirmation' || r.lifecycle === 'suspended') return { action: 'keep', why: `${r.lifecycle}: waits for sbctl monitor recover` };
  if (r.expiresAtMs !== undefined && r.expiresAtMs <= nowMs) return { action: 'expire', why: 'its expiresAt has passed' };
  switch (r.type) {
    case 'spawn':
      if (r.unit === undefined) return { action: 'report-gone', why: 'its unit is gone: never replayed' };
      if (r.unit.result === 'start-limit-hit' || (r.unit.activeState === 'failed' && (r.unit.nRestarts ?? 0) >= CRASH_LOOP_BURST)) return { action: 'quarantine', why: 'its unit hit the start limit (crash loop)' };
      if (r.unit.activeState === 'active' || r.unit.activeState === 'activating' || r.unit.activeState === 'reloading') return { action: 'reuse', why: 'its process lives on in its unit' };
      return { action: 'report-gone', why: `its unit is ${r.unit.activeState} (${r.unit.result}): never replayed` };
    case 'poll':
      return { action: 'await-confirmation', why: 'a local command: runs again only when confirmed (sbctl monitor recover approve)' };
    default:
      return { action: 'resume', why: 'read-only: resumes' };
  }
}

const SUMMARY_WORDS: Array<[RecoveryAction, string]> = [
  ['resume', 'resumed'], ['reuse', 'reused'], ['await-confirmation', 'awaiting confirmation'], ['expire', 'expired'],
  ['quarantine', 'quarantined'], ['report-gone', 'gone'], ['end-with-session', 'stopped with their session'],
  ['stop-unit', "quarantined ones' units stopped"], ['compact', 'stale records compacted'],
];

/** The plan for every record found at start (pure). `corrupt` counts records that could not be read. */
export function planRecovery(records: readonly RecordView[], corrupt: number, nowMs: number): RecoveryPlan {
  const actions = records.map((r) => ({ id: r.id, ...decide(r, nowMs) }));
  const count = (a: RecoveryAction): number => actions.filter((x) => x.action === a).length + (a === 'compact' ? corrupt : 0);
  const parts = SUMMARY_WORDS.filter(([a]) => count(a) > 0).map(([a, word]) => `${count(a)} ${word}`);
  return { actions, summary: parts.length ? `monitors after the restart: ${parts.join(', ')}` : 'monitors after the restart: none on record' };
}
