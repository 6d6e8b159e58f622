/**
 * A session's monitors over their whole life (issue 13): what waits for a decision and the
 * decision (recover approve / reject), every monitor of the session stopped at once (stop --all),
 * a monitor's full receipt (inspect) and the garbage collection of records (gc). The thin shell
 * over the manager; the decisions are pure beside it (gc.ts, receipt.ts, expiry.ts).
 */
import { type SbdClock, systemClock } from '../util/clock';
import { expiryDeadline } from './expiry';
import { type GcEntry, type GcView, planGc } from './gc';
import { type MonitorManager, finished } from './manager';
import { MonitorRequestError } from './runner';
import { type Receipt, receiptOf } from './receipt';
import type { Lifecycle } from './recovery';
import { archiveRecord, loadRecords } from './store';

/** What `recover` lists: a decision is wanted before these run again. */
export const WAITING: readonly Lifecycle[] = ['quarantined', 'awaiting-confirmation', 'suspended'];
const waits = (l: Lifecycle): boolean => WAITING.includes(l);

export interface Waiting {
  id: string;
  handle: string;
  label: string | null;
  type: string;
  lifecycle: string;
  reason: string | null;
}

/** The session's monitors that wait for `recover approve` or `reject`. */
export function waitingMonitors(m: MonitorManager, sessionId: string): Waiting[] {
  return m.list(sessionId).filter((r) => waits(r.lifecycle)).map((r) => ({ id: r.id, handle: r.handle, label: r.spec.label ?? null, type: r.spec.type, lifecycle: r.lifecycle, reason: r.reason ?? null }));
}

function mustWait(m: MonitorManager, sessionId: string, handle: string, verb: string) {
  const r = m.find(sessionId, handle);
  if (!waits(r.lifecycle)) throw new MonitorRequestError(`monitor ${r.handle} is ${r.lifecycle}, not waiting: recover ${verb} takes a quarantined, suspended or awaiting-confirmation one (sbctl monitor recover lists them)`);
  return r;
}

/**
 * Run a waiting monitor again: a quarantined spawn gets a fresh start of its unit (its failed
 * state reset first); a suspended or awaiting-confirmation one begins again through its runner.
 * A monitor quarantined for what it would run (a poll with work in it) is never approved: it
 * would run that work.
 */
export async function approve(m: MonitorManager, sessionId: string, handle: string): Promise<{ handle: string; lifecycle: string }> {
  const r = mustWait(m, sessionId, handle, 'approve');
  if (r.lifecycle === 'quarantined' && r.spec.type !== 'spawn') {
    throw new MonitorRequestError(`monitor ${r.handle} was quarantined for what it runs (${r.reason ?? 'unsafe'}): it is never run; reject it and start one without that`);
  }
  const after = await m.restart(r.id);
  return { handle: r.handle, lifecycle: after.lifecycle };
}

/** Stop whatever is left of a waiting monitor and archive its record. */
export async function reject(m: MonitorManager, sessionId: string, handle: string): Promise<{ handle: string; archivedTo: string }> {
  const r = mustWait(m, sessionId, handle, 'reject');
  return { handle: r.handle, archivedTo: await m.reject(r.id, `rejected by sbctl monitor recover reject (it was ${r.lifecycle}${r.reason ? `: ${r.reason}` : ''})`) };
}

/** What `stop --all` stops: the session's monitors that run or wait (not those already ended). */
export function stoppable(m: MonitorManager, sessionId: string): Array<{ id: string; handle: string; label: string | null; type: string; lifecycle: string }> {
  return m.list(sessionId).filter((r) => !finished(r)).map((r) => ({ id: r.id, handle: r.handle, label: r.spec.label ?? null, type: r.spec.type, lifecycle: r.lifecycle }));
}

/** Stop every monitor of this session (and no other's): each its own unit or watch. */
export async function stopAll(m: MonitorManager, sessionId: string): Promise<Array<{ handle: string; lifecycle: string }>> {
  const out: Array<{ handle: string; lifecycle: string }> = [];
  for (const r of stoppable(m, sessionId)) out.push({ handle: r.handle, lifecycle: (await m.end(r.id, 'stopped', 'stopped by sbctl monitor stop --all')).lifecycle });
  return out;
}

/** A monitor's full receipt, with what systemd says of its unit now. */
export async function inspect(m: MonitorManager, sessionId: string, handle: string, clock: SbdClock = systemClock): Promise<Receipt> {
  const r = m.find(sessionId, handle);
  const unit = r.unit ? await m.host.getUnit(r.unit.name).catch(() => undefined) : undefined;
  let expiresInS: number | null = null;
  if (r.spec.expiresAt !== undefined) {
    const mono = clock.monotonicMs();
    expiresInS = (expiryDeadline(Date.parse(r.spec.expiresAt), r.expiry, { wallMs: Date.now(), monoMs: mono, bootId: clock.bootId() }).atMonoMs - mono) / 1000;
  }
  return receiptOf(m.get(r.id) ?? r, r.handle, unit, expiresInS);
}

/** gc: what to archive (dry run), or archived (apply). Never stops anything, never touches a unit. */
export async function collect(m: MonitorManager, apply: boolean, nowMs = Date.now()): Promise<Array<GcEntry & { archivedTo?: string }>> {
  const { corrupt } = loadRecords(m.host.recordsDir);
  const views: GcView[] = await Promise.all(m.list().map(async (r) => {
    const s = m.host.session(r.sessionId);
    const unit = r.unit ? await m.host.getUnit(r.unit.name).catch(() => undefined) : undefined;
    return {
      id: r.id, handle: r.handle, sessionId: r.sessionId, lifecycle: r.lifecycle, endedAtMs: r.endedAtMs,
      session: s === undefined ? 'gone' : s.invocationId === r.sessionInvocation ? 'live' : 'replaced',
      unitActive: unit !== undefined && (unit.activeState === 'active' || unit.activeState === 'activating' || unit.activeState === 'reloading'),
    } satisfies GcView;
  }));
  const plan = planGc(views, corrupt, nowMs);
  if (!apply) return plan;
  return plan.map((e) => {
    if (e.kind === 'kept') return e;
    if (e.kind === 'corrupt' && e.file) return { ...e, archivedTo: archiveRecord(m.host.recordsDir, e.file, e.why) };
    if (e.id) return { ...e, archivedTo: m.archive(e.id, `gc: ${e.why}`) };
    return e;
  });
}
