/**
 * One runner per monitor type (issue 13): how a monitor of that type begins, resumes after a
 * restart, stops, and reads what systemd tells of its unit. The manager (manager.ts) owns the
 * records, reuse, the output files it follows and the notices; a runner is handed this kit and
 * never keeps records of its own. New types are new files under runners/, registered in
 * runners/index.ts.
 */
import type { InboxEntry } from '../inbox/store';
import type { TransientProperty, UnitInfo } from '../systemd/types';
import type { MonitorRecord } from './store';

/** What a monitor's session is to the manager. */
export interface MonitorSession {
  id: string;
  unit: string;
  invocationId: string;
  slice: string;
  /** The session's own brake: a spawn gets the same (it is the session's work, outside its scope). */
  memoryHigh: number;
}

/** What sbd gives the monitors: files, systemd, the sessions and the inbox. */
export interface MonitorHost {
  recordsDir: string;
  /** Where spawns write their output (a runtime directory: it need not survive a reboot). */
  outputDir: string;
  startTransientService(name: string, props: readonly TransientProperty[]): Promise<void>;
  stopUnit(name: string): Promise<void>;
  /** ResetFailedUnit: a failed unit's state (and its start-limit count) cleared; systemd then unloads it. */
  resetFailedUnit(name: string): Promise<void>;
  getUnit(name: string): Promise<UnitInfo | undefined>;
  watchFile(file: string): void;
  unwatchFile(file: string): void;
  session(id: string): MonitorSession | undefined;
  owner: { busName: string; epoch: number };
  /** Tell the session's agent (its inbox and the Notice signal). */
  notify(session: string, notice: Omit<InboxEntry, 'id'>): void;
  /** The program's absolute path, from sbd's PATH; undefined when not found. */
  resolveProgram(name: string): string | undefined;
  monotonicMs(): number;
  log(level: 'info' | 'warn', msg: string, fields: Record<string, unknown>): void;
}

/** What the manager lends a runner. */
export interface RunnerKit {
  host: MonitorHost;
  /** The record as it is now (undefined once forgotten). */
  get(id: string): MonitorRecord | undefined;
  /** Keep a record (memory and disk). */
  save(r: MonitorRecord): void;
  /** The monitor's short handle. */
  handle(id: string): string;
  /** Follow a file's appended lines into the monitor's notices, from the record's offset. */
  follow(id: string, file: string): void;
  unfollow(file: string): void;
  /** Read what a followed file gained now (after a restart: what came while sbd was away). */
  catchUp(file: string): void;
  /** Tell the agent something about the monitor (its label, or handle, leads the text). */
  tell(r: MonitorRecord, kind: string, text: string): void;
}

/** The recovery actions a runner carries out itself; the rest are the manager's. */
export type ResumeAction = 'resume' | 'reuse';

export interface Runner {
  begin(kit: RunnerKit, record: MonitorRecord, session: MonitorSession): Promise<void>;
  resume(kit: RunnerKit, record: MonitorRecord, action: ResumeAction): void;
  /** Stop what runs; the record is already saved as stopped. */
  stop(kit: RunnerKit, record: MonitorRecord): Promise<void>;
  /** The monitor's unit changed (systemd's signal); `info` undefined once the unit is gone. */
  onUnit?(kit: RunnerKit, record: MonitorRecord, info: UnitInfo | undefined): void;
  /**
   * Run a waiting monitor again (sbctl monitor recover approve); the record is saved as running.
   * Without it, `begin` runs it again. A spawn has its own: its failed unit is reset first (a
   * transient unit's name is taken while systemd keeps it failed).
   */
  restart?(kit: RunnerKit, record: MonitorRecord): Promise<void>;
  /** After `stop`, when the record goes to archive/ (recover reject): clear what systemd keeps of it. */
  discard?(kit: RunnerKit, record: MonitorRecord): Promise<void>;
}

/** A request the manager refuses (bad spec, unknown session, a type not run here): exit code 2 in sbctl. */
export class MonitorRequestError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'MonitorRequestError';
  }
}
