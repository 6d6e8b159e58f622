/**
 * The monitors' own clocks in sbd (issue 13): expiresAt for every type, and heartbeats. Both run
 * on CLOCK_MONOTONIC through libuv's timers; the decisions are monitor/expiry.ts and
 * monitor/heartbeat.ts (pure). Armed when a monitor's record is saved running (its start, its
 * resume after a restart, its approval) and cleared when it ends; they follow the manager through
 * its observer, so no runner has to know them.
 *  - Expired: the record is saved `expired` first (so systemd's report of the unit's end is not
 *    taken for an exit), its runner stops what runs, and the agent is told once.
 *  - A spawn also carries RuntimeMaxUSec, systemd's backstop for when sbd is not running
 *    (monitor/unit.ts, EXPIRY_BACKSTOP_S).
 */
import type { SbdClock } from '../util/clock';
import { type SavedExpiry, expiryDeadline, timerDelayMs } from './expiry';
import { heartbeatDue, heartbeatDueMs, heartbeatText } from './heartbeat';
import { type MonitorManager, finished } from './manager';
import type { MonitorRecord } from './store';

export class MonitorTimers {
  private readonly expiries = new Map<string, NodeJS.Timeout>();
  private readonly beats = new Map<string, NodeJS.Timeout>();
  /** When the monitor last told the agent anything, or its heartbeat period began (monotonic ms). */
  private readonly lastTold = new Map<string, number>();
  private readonly lastLine = new Map<string, string>();
  /** The monotonic deadline kept in each record (monitor/expiry.ts SavedExpiry). */
  private readonly kept = new Map<string, SavedExpiry>();
  private closed = false;

  constructor(
    private readonly m: MonitorManager,
    private readonly clock: SbdClock,
    private readonly warn: (msg: string, fields: Record<string, unknown>) => void = () => {},
  ) {
    m.observe({
      saved: (r) => this.onSaved(r),
      lines: (id, lines) => {
        const last = lines.at(-1);
        if (last !== undefined) this.lastLine.set(id, last);
      },
      told: (id) => this.lastTold.set(id, this.clock.monotonicMs()),
      closed: () => this.close(),
    });
  }

  private onSaved(r: MonitorRecord): void {
    if (this.closed) return;
    if (finished(r)) {
      this.clear(r.id);
      return;
    }
    if (r.spec.expiresAt !== undefined && !this.expiries.has(r.id)) this.armExpiry(r, r.spec.expiresAt);
    const kept = this.kept.get(r.id);
    // a runner's save of the record it was handed (before the expiry was kept) must not lose it
    if (kept !== undefined && r.expiry === undefined) this.m.patch(r.id, { expiry: kept });
    if (r.lifecycle === 'running' && r.spec.heartbeatMinutes !== undefined) {
      if (!this.beats.has(r.id)) {
        this.lastTold.set(r.id, Math.max(this.lastTold.get(r.id) ?? 0, this.clock.monotonicMs())); // the period begins now
        this.armBeat(r.id, r.spec.heartbeatMinutes * 60_000);
      }
    } else {
      this.clearBeat(r.id);
    }
  }

  private armExpiry(r: MonitorRecord, expiresAt: string): void {
    const { atMonoMs, save } = expiryDeadline(Date.parse(expiresAt), r.expiry, { wallMs: Date.now(), monoMs: this.clock.monotonicMs(), bootId: this.clock.bootId() });
    this.scheduleExpiry(r.id, atMonoMs);
    if (save) {
      this.kept.set(r.id, save);
      this.m.patch(r.id, { expiry: save }); // armed first: this save finds it armed
    }
  }

  private scheduleExpiry(id: string, atMonoMs: number): void {
    const t = setTimeout(() => {
      // a wait longer than setTimeout takes is armed in steps
      if (timerDelayMs(atMonoMs, this.clock.monotonicMs()) > 0) this.scheduleExpiry(id, atMonoMs);
      else void this.expire(id);
    }, timerDelayMs(atMonoMs, this.clock.monotonicMs()));
    t.unref();
    this.expiries.set(id, t);
  }

  private async expire(id: string): Promise<void> {
    this.expiries.delete(id);
    const r = this.m.get(id);
    if (!r || finished(r) || this.closed) return;
    const why = `its expiresAt (${r.spec.expiresAt ?? ''}) has passed`;
    try {
      await this.m.end(id, 'expired', why);
    } catch (err) {
      this.warn('stopping an expired monitor failed', { monitor: id, err });
    }
    this.m.tell(id, 'expired', `${why}: stopped`);
  }

  private armBeat(id: string, periodMs: number): void {
    const t = setTimeout(() => {
      this.beats.delete(id);
      const r = this.m.get(id);
      if (!r || r.lifecycle !== 'running' || this.closed) return;
      const state = { lastToldMonoMs: this.lastTold.get(id) ?? 0 };
      // skipped when another notice of the monitor went out within the period
      if (heartbeatDue(state, periodMs, this.clock.monotonicMs())) {
        this.m.tell(id, 'heartbeat', heartbeatText({ ticks: r.ticks, consecutiveFailures: r.consecutiveFailures, lastLine: this.lastLine.get(id) }));
      }
      this.armBeat(id, periodMs);
    }, timerDelayMs(heartbeatDueMs({ lastToldMonoMs: this.lastTold.get(id) ?? 0 }, periodMs), this.clock.monotonicMs()));
    t.unref();
    this.beats.set(id, t);
  }

  private clearBeat(id: string): void {
    const t = this.beats.get(id);
    if (t) clearTimeout(t);
    this.beats.delete(id);
  }

  private clear(id: string): void {
    const t = this.expiries.get(id);
    if (t) clearTimeout(t);
    this.expiries.delete(id);
    this.clearBeat(id);
    this.lastTold.delete(id);
    this.lastLine.delete(id);
    this.kept.delete(id);
  }

  close(): void {
    this.closed = true;
    for (const id of [...new Set([...this.expiries.keys(), ...this.beats.keys()])]) this.clear(id);
  }
}
