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
  /** One StartTransientUnit: the timer started, its service created beside it (a poll, monitor/poll-unit.ts). */
  startTransientTimer(timer: string, timerProps: readonly TransientProperty[], service: string, serviceProps: readonly TransientProperty[]): Promise<void>;
  stopUnit(name: string): Promise<void>;
  /** ResetFailedUnit: a failed unit's state (and its start-limit count) cleared; systemd then unloads it. */
  resetFailedUnit(name: string): Promise<void>;
  getUnit(name: string): Promise<UnitInfo | undefined>;
  /** Watch a file (inotify); with `entries`, a directory whose entries are told by their own paths as they come and go. */
  watchFile(file: string, options?: { entries?: boolean }): void;
  unwatchFile(file: string): void;
  session(id: string): MonitorSession | undefined;
  owner: { busName: string; epoch: number };
  /** Tell the session's agent (its inbox and the Notice signal): the entry as written, or
   * undefined when the inbox could not be written (then nothing was told). */
  notify(session: string, notice: Omit<InboxEntry, 'id'>): InboxEntry | undefined;
  /** How far each monitor's told lines were read, from the notices in the session's inbox (its
   * `through`): a restart resumes past them even when sbd was killed before it saved its offset. */
  toldThrough?(session: string): ReadonlyMap<string, { through: number; notice: number }>;
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
  /** New output lines of the monitor: those matching notifyOn are told, coalesced, at most maxLines. */
  lines(id: string, lines: readonly string[]): void;
  /** Watch a path for the runner's onFile (several monitors may watch one path). Throws when it cannot be watched; the path
   * stays routed to the monitor all the same (a file not there yet is named by its directory's entries). */
  watch(id: string, file: string, options?: { entries?: boolean }): void;
  unwatch(id: string, file: string): void;
}

/** What a watched path did: changed (or, for a directory's entry, came), or went. */
export type FileKind = 'modified' | 'gone';

/** The recovery actions a runner carries out itself; the rest are the manager's. */
export type ResumeAction = 'resume' | 'reuse';

export interface Runner {
  begin(kit: RunnerKit, record: MonitorRecord, session: MonitorSession): Promise<void>;
  resume(kit: RunnerKit, record: MonitorRecord, action: ResumeAction): void;
  /** Stop what runs; the record is already saved as stopped. */
  stop(kit: RunnerKit, record: MonitorRecord): Promise<void>;
  /** One of the monitor's units (sb-monitor-ID.*) changed (systemd's signal); `info` undefined once the unit is gone. */
  onUnit?(kit: RunnerKit, record: MonitorRecord, info: UnitInfo | undefined, unit: string): void;
  /** The runner counts the record's ticks itself (a poll: one per run of its service), not the manager per output read. */
  countsTicks?: boolean;
  /** A path the monitor watches (kit.watch) changed. */
  onFile?(kit: RunnerKit, record: MonitorRecord, file: string, kind: FileKind): void;
  /** sbd is closing (or a test's manager): drop timers and handles, change no record. */
  close?(kit: RunnerKit): void;
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
