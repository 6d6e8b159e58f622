/**
 * Incidents: what sbd tells about a session, once per occurrence. Each goes to the log (or, under
 * journald, natively to the journal: src/journal/), to the D-Bus Incident signal (sbctl watch),
 * and into the session's "last action" for status.
 */
import type { Logger } from './log';

export type IncidentType =
  | 'standing-still'
  | 'brake-raised'
  | 'no-room'
  | 'will-stop'
  | 'subtree-stopped'
  | 'stop-finished'
  | 'nothing-to-stop'
  | 'oom-kill'
  | 'cleared'
  | 'brake-lowered'
  | 'feed-fallback'
  | 'deadline-dropped'
  | 'procs-reaped'
  | 'leftovers'
  | 'pegged'
  | 'missing'
  | 'silent'
  | 'recovered'
  | 'slice-standing-still'
  | 'slice-brake-raised'
  | 'slice-cleared'
  | 'culprit'
  | 'machine-short';

export interface Incident {
  type: IncidentType;
  unit: string;
  session: string;
  atMs: number;
  /** One sentence for people. Never command-line arguments. */
  message: string;
  /** True when sbd only observes: the action was not taken. */
  observeOnly: boolean;
  [figure: string]: unknown;
}

const WARNINGS: ReadonlySet<IncidentType> = new Set<IncidentType>(['subtree-stopped', 'stop-finished', 'will-stop', 'standing-still', 'slice-standing-still', 'culprit', 'machine-short', 'procs-reaped', 'pegged', 'missing', 'silent', 'oom-kill', 'deadline-dropped']);

/** The log level an incident of this type is told at. */
export function incidentLevel(type: IncidentType): 'warn' | 'info' {
  return WARNINGS.has(type) ? 'warn' : 'info';
}

/** Tells an incident elsewhere than the log (the journal, natively): true when it was taken. */
export type IncidentWriter = (i: Incident, level: 'warn' | 'info') => boolean;

export class Incidents {
  private readonly listeners: Array<(i: Incident) => void> = [];
  private readonly last = new Map<string, Incident>();

  /** `writer`: where incidents go instead of a log line, when it takes them (src/journal/). */
  constructor(private readonly log: Logger, private readonly writer?: IncidentWriter) {}

  onIncident(l: (i: Incident) => void): void {
    this.listeners.push(l);
  }

  tell(i: Incident): void {
    this.last.set(i.unit, i);
    const level = incidentLevel(i.type);
    if (!this.writer?.(i, level)) this.log[level]({ event: i.type, ...i }, i.message);
    for (const l of this.listeners) l(i);
  }

  /** The session's last incident as one line for status, or null. */
  lastAction(unit: string): string | null {
    const i = this.last.get(unit);
    return i ? `${new Date(i.atMs).toISOString().slice(11, 19)} ${i.type}${i.observeOnly ? ' (observe-only: not done)' : ''}: ${i.message}` : null;
  }

  forget(unit: string): void {
    this.last.delete(unit);
  }
}
