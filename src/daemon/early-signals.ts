/**
 * sbd's bus signals (Incident, Notice) from its start on. The interface is exported at READY,
 * after the adoption, but the adoption already tells: a restarted sbd restores the freeze
 * signals its predecessor told and tells their recovery at the first check (CI, guest 41: the
 * recovery was in the journal and never reached sbctl watch). Until the service is attached the
 * signals wait here, in the order told; attach() sends them, and from then on each goes at once.
 */
import type { InboxEntry } from '../inbox/store';
import type { BusService } from './bus-service';
import type { Incident } from './incidents';

/**
 * Signals kept before READY, the oldest dropped beyond it (each is in the journal too): five
 * for each of 2,000 sessions, the most sbd is measured at, when every one of them had a freeze
 * signal and a monitor notice to tell in its adoption.
 */
export const EARLY_SIGNALS_KEPT = 10_000;

export class EarlySignals implements BusService {
  private service: BusService | undefined;
  private pending: Array<(s: BusService) => void> = [];
  /** Signals dropped before READY, beyond EARLY_SIGNALS_KEPT. */
  dropped = 0;

  constructor(private readonly limit = EARLY_SIGNALS_KEPT) {}

  emitIncident(incident: Incident): void {
    this.send((s) => s.emitIncident(incident));
  }

  emitNotice(session: string, entry: InboxEntry): void {
    this.send((s) => s.emitNotice(session, entry));
  }

  /**
   * The interface is exported: the signals told so far are sent, in order; a failure of one is
   * given to `onError` and the rest still go. Returns how many were sent.
   */
  attach(service: BusService, onError: (err: unknown) => void): number {
    this.service = service;
    const waiting = this.pending;
    this.pending = [];
    let sent = 0;
    for (const send of waiting) {
      try {
        send(service);
        sent++;
      } catch (err) {
        onError(err);
      }
    }
    return sent;
  }

  private send(signal: (s: BusService) => void): void {
    if (this.service) return signal(this.service); // a failure is the caller's, as it was
    if (this.pending.length >= this.limit) {
      this.pending.shift();
      this.dropped++;
    }
    this.pending.push(signal);
  }
}
