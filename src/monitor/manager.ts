/**
 * sbd's monitors (issue 13): takes a request, decides reuse, keeps the record, runs what systemd
 * does not (a tail's reading, notices into the inbox) and lets systemd run the rest (a spawn is a
 * transient service: monitor/unit.ts). The decisions are the pure modules beside it (spec, safety,
 * identity, notices, recovery); this is the thin shell that applies them.
 *
 * Each type's own running is its runner's (runners/); a type without a runner is checked (a poll
 * with work in it is quarantined with the reason) and refused as not yet run by this sbd.
 */
import type { UnitInfo } from '../systemd/types';
import { decideReuse, handleOf, newMonitorId, resolveHandle, sourceHash } from './identity';
import { pastExpiry } from './expiry';
import { type Pending, addLines, compileMatchers, dueAtMs, flush } from './notices';
import type { RecoveryPlan } from './recovery';
import { type FileKind, type MonitorHost, MonitorRequestError, type Runner, type RunnerKit } from './runner';
import { RUNNERS } from './runners';
import { judgeProbe, judgeRemoteProbe } from './safety';
import { type MonitorSpec, OUTPUT_CAP_BYTES, parseMonitorSpec } from './spec';
import { type CorruptRecord, type MonitorRecord, archiveRecord, loadRecords, recordFile, removeRecord, saveRecord } from './store';
import { readAppended } from './tail-read';
import { monitorIdOfUnit } from './unit';

export { type MonitorHost, MonitorRequestError, type MonitorSession } from './runner';

export type StartAnswer = { answer: 'created' | 'reused' | 'replaced' | 'quarantined'; id: string; handle: string; reason?: string };

const live = (r: MonitorRecord): boolean => r.lifecycle === 'running' || r.lifecycle === 'suspended' || r.lifecycle === 'awaiting-confirmation';
/** Ended for good: nothing of it runs or waits. */
export const finished = (r: MonitorRecord): boolean => r.lifecycle === 'stopped' || r.lifecycle === 'expired' || r.lifecycle === 'gone';

/** What the lifecycle's timers (monitor/timers.ts) follow: each save, each new output line, each notice. */
export interface MonitorObserver {
  /** A record as it now is: after each save, and for every record once recovery is done. */
  saved?(r: MonitorRecord): void;
  lines?(id: string, lines: readonly string[]): void;
  told?(id: string): void;
  closed?(): void;
}

export class MonitorManager {
  private readonly records = new Map<string, MonitorRecord>();
  private readonly pending = new Map<string, { batch: Pending | undefined; timer: NodeJS.Timeout | undefined }>();
  private readonly byFile = new Map<string, string>();
  /** Paths watched for runners' onFile (kit.watch): path -> the monitors that watch it. */
  private readonly watchers = new Map<string, Set<string>>();

  private readonly kit: RunnerKit;
  private readonly observers: MonitorObserver[] = [];

  constructor(readonly host: MonitorHost) {
    this.kit = {
      host,
      get: (id) => this.records.get(id),
      save: (r) => this.save(r),
      handle: (id) => this.handle(id),
      follow: (id, file) => this.follow(id, file),
      unfollow: (file) => this.unfollow(file),
      catchUp: (file) => void this.onFile(file),
      tell: (r, kind, text) => {
        this.host.notify(r.sessionId, { atMs: Date.now(), from: this.handle(r.id), kind, text: `${r.spec.label ?? this.handle(r.id)}: ${text}`, monitor: r.id });
        for (const o of this.observers) o.told?.(r.id);
      },
      lines: (id, lines) => this.output(id, lines),
      watch: (id, file, options) => this.watch(id, file, options),
      unwatch: (id, file) => this.unwatch(id, file),
    };
  }

  private runner(r: MonitorRecord): Runner | undefined {
    return RUNNERS[r.spec.type];
  }

  private corrupt: CorruptRecord[] = [];
  /** The records as loadAll read them from disk, until apply has carried out their plan. */
  private loaded = new Map<string, MonitorRecord>();

  /**
   * The records on disk (after a restart) that this sbd does not hold already; what to do with
   * them is recovery's (monitor/recovery.ts). Recovery waits for the sessions' adoption, which
   * can outlast READY, and a monitor asked for meanwhile is on disk too: it is this sbd's own,
   * running, not one from before the restart (taken for one, a new poll had its timer stopped
   * to await confirmation, guest 49 under CI's load).
   */
  loadAll(): { records: MonitorRecord[]; corrupt: number } {
    const { records: onDisk, corrupt } = loadRecords(this.host.recordsDir);
    const records = onDisk.filter((r) => !this.records.has(r.id));
    for (const r of records) {
      this.records.set(r.id, r);
      this.loaded.set(r.id, r);
    }
    this.corrupt = corrupt;
    return { records, corrupt: corrupt.length };
  }

  /**
   * What loadAll read and no request has changed since: recovery's to plan. sbd loads the records
   * at its start, before its interface is on the bus, so that a request in the window before
   * recovery (adoption can outlast READY) sees them: a list shows them, a stop ends them, and a
   * start is answered "reused" instead of running a second copy beside the one recovery resumes.
   */
  toRecover(): { records: MonitorRecord[]; corrupt: number } {
    return { records: [...this.loaded.values()].filter((r) => this.records.get(r.id) === r), corrupt: this.corrupt.length };
  }

  /** Loaded from disk and not yet recovered (recovery, or a request, saves it anew). */
  private unrecovered(r: MonitorRecord): boolean {
    return this.loaded.get(r.id) === r && this.records.get(r.id) === r;
  }

  /** Carry out a recovery plan: resume, reuse, expire, quarantine, report gone, compact. */
  apply(plan: RecoveryPlan): void {
    for (const c of this.corrupt) archiveRecord(this.host.recordsDir, c.file, c.why); // kept aside with why, never dropped
    this.corrupt = [];
    const inboxes = new Map<string, ReadonlyMap<string, { through: number; notice: number }>>();
    /** Where a notice told after the record's last save says its lines ended (undefined: none). */
    const toldThrough = (r: MonitorRecord): { through: number; notice: number } | undefined => {
      if (r.offset === undefined || !this.host.toldThrough) return undefined;
      let told = inboxes.get(r.sessionId);
      if (!told) inboxes.set(r.sessionId, (told = this.host.toldThrough(r.sessionId)));
      const last = told.get(r.id);
      // a notice the record's save came after says nothing new (the file may have been truncated since)
      return last !== undefined && last.notice > (r.toldNotice ?? 0) ? last : undefined;
    };
    const loaded = this.loaded;
    this.loaded = new Map();
    for (const { id, action, why } of plan.actions) {
      const r = this.records.get(id);
      // planned from the record as loaded: one saved since (a request's stop, say) is this sbd's now
      if (!r || r !== loaded.get(id)) continue;
      switch (action) {
        case 'resume':
        case 'reuse': {
          // the notice is the tell: an sbd killed after it, before it saved the offset past its
          // lines, left the offset where they began; it resumes past them, not telling them twice
          // (saved with the notice's id: at a later restart that notice is old news)
          const told = toldThrough(r);
          const mine = { ...r, owner: this.host.owner, ...(told ? { offset: told.through, toldNotice: told.notice } : {}) }; // the lease passes to this sbd
          this.save(mine);
          this.runner(r)?.resume(this.kit, mine, action);
          break;
        }
        case 'await-confirmation':
        case 'expire':
        case 'quarantine':
        case 'report-gone': {
          const lifecycle = action === 'await-confirmation' ? 'awaiting-confirmation' : action === 'expire' ? 'expired' : action === 'quarantine' ? 'quarantined' : 'gone';
          this.save({ ...r, lifecycle, reason: why });
          if (action === 'expire' && r.unit) void this.host.stopUnit(r.unit.name).catch(() => undefined);
          // a local poll's timer is stopped until the agent confirms (sbctl monitor recover approve)
          if (action === 'await-confirmation') void this.runner(r)?.stop(this.kit, this.must(id));
          if (action === 'report-gone' || action === 'quarantine' || action === 'expire') this.kit.tell(r, lifecycle, why);
          break;
        }
        case 'end-with-session':
          this.save({ ...r, lifecycle: 'stopped', reason: why }); // saved first: its unit's end is not an exit
          if (r.unit) void this.host.stopUnit(r.unit.name).catch(() => undefined);
          break;
        case 'stop-unit': // the record stays as it is, the agent was told when it was quarantined
          if (r.unit) void this.host.stopUnit(r.unit.name).catch((err: unknown) => this.host.log('warn', "stopping a quarantined monitor's unit failed", { monitor: id, unit: r.unit?.name, err }));
          break;
        case 'compact':
          this.records.delete(id);
          removeRecord(this.host.recordsDir, id);
          break;
        case 'keep':
          break;
      }
    }
    for (const r of this.records.values()) for (const o of this.observers) o.saved?.(r);
  }

  list(sessionId?: string): Array<MonitorRecord & { handle: string }> {
    const all = [...this.records.values()];
    const ids = all.map((r) => r.id);
    return all.filter((r) => sessionId === undefined || r.sessionId === sessionId).map((r) => ({ ...r, handle: handleOf(r.id, ids) }));
  }

  private handle(id: string): string {
    return handleOf(id, [...this.records.keys()]);
  }

  private save(given: MonitorRecord): void {
    const before = this.records.get(given.id);
    // when it ended: gc's retention counts from there
    const r = finished(given) && given.endedAtMs === undefined ? { ...given, endedAtMs: before && finished(before) ? before.endedAtMs ?? Date.now() : Date.now() } : given;
    this.records.set(r.id, r);
    saveRecord(this.host.recordsDir, r);
    for (const o of this.observers) o.saved?.(r);
  }

  /** Start (or reuse, or replace) a monitor of `sessionId` as `input` asks. */
  async start(sessionId: string, input: unknown): Promise<StartAnswer> {
    const session = this.host.session(sessionId);
    if (!session) throw new MonitorRequestError(`no session "${sessionId}" is watched by sbd (sbctl status lists them)`);
    let spec: MonitorSpec;
    try {
      spec = parseMonitorSpec(input);
    } catch (err) {
      throw new MonitorRequestError((err as Error).message);
    }
    const past = pastExpiry(spec.expiresAt, Date.now());
    if (past !== undefined) throw new MonitorRequestError(past);
    const hash = sourceHash(spec);
    // one not yet recovered is reused only when it is this very session's: recovery ends the others
    const mine = [...this.records.values()].filter((r) => r.sessionId === sessionId && (!this.unrecovered(r) || r.sessionInvocation === session.invocationId));
    const decision = decideReuse(spec, hash, mine.map((r) => ({ id: r.id, reuseKey: r.spec.reuseKey, sourceHash: r.sourceHash, live: live(r) })));
    if (decision.answer === 'reused') return { answer: 'reused', id: decision.id, handle: this.handle(decision.id) };
    const record: MonitorRecord = {
      id: newMonitorId(), sessionId, sessionUnit: session.unit, sessionInvocation: session.invocationId, spec, sourceHash: hash,
      lifecycle: 'running', createdAtMs: Date.now(), owner: this.host.owner, ticks: 0, consecutiveFailures: 0, truncations: 0,
    };
    if (spec.type === 'poll' || spec.type === 'ssh') {
      const verdict = spec.type === 'ssh' ? judgeRemoteProbe(spec.argv) : judgeProbe(spec.argv);
      if (!verdict.ok) {
        this.save({ ...record, lifecycle: 'quarantined', reason: verdict.reason });
        return { answer: 'quarantined', id: record.id, handle: this.handle(record.id), reason: verdict.reason };
      }
    }
    const runner = RUNNERS[spec.type];
    if (!runner) throw new MonitorRequestError(`a ${spec.type} monitor is checked but not yet run by this sbd (${Object.keys(RUNNERS).join(', ')} are)`);
    if (decision.answer === 'replaced') await this.stop(sessionId, decision.id, 'replaced');
    this.save(record);
    await runner.begin(this.kit, record, session);
    return { answer: decision.answer, id: record.id, handle: this.handle(record.id) };
  }

  private must(id: string): MonitorRecord {
    const r = this.records.get(id);
    if (!r) throw new Error(`monitor ${id} vanished`);
    return r;
  }

  private follow(id: string, file: string): void {
    this.byFile.set(file, id);
    this.readTo.delete(id); // read from the record's offset (a start or a restart set it)
    try {
      this.host.watchFile(file);
    } catch (err) {
      this.host.log('warn', 'cannot watch a monitored file yet', { monitor: id, file, err });
    }
  }

  private unfollow(file: string): void {
    this.byFile.delete(file);
    if (!this.watchers.has(file)) this.host.unwatchFile(file);
  }

  private watch(id: string, file: string, options?: { entries?: boolean }): void {
    // routed to the monitor even when the watch fails: a file not there yet is named by its directory's entries
    this.watchers.set(file, (this.watchers.get(file) ?? new Set<string>()).add(id));
    this.host.watchFile(file, options); // again even when watched: the path may be a new inode now
  }

  private unwatch(id: string, file: string): void {
    const ids = this.watchers.get(file);
    if (!ids?.delete(id) || ids.size > 0) return;
    this.watchers.delete(file);
    if (!this.byFile.has(file)) this.host.unwatchFile(file);
  }

  /** A watched file changed; true when it is a monitor's. */
  onFile(file: string, kind: FileKind = 'modified'): boolean {
    const watching = this.watchers.get(file);
    for (const wid of [...(watching ?? [])]) {
      const r = this.records.get(wid);
      if (r && live(r)) this.runner(r)?.onFile?.(this.kit, r, file, kind);
    }
    const followed = this.onFollowed(file);
    if (followed && kind === 'gone') {
      // rotated or replaced: watch the new file (read from its start on the next change)
      try {
        this.host.watchFile(file);
      } catch {
        /* not there yet: a later start of the monitor watches it */
      }
    }
    return followed || watching !== undefined;
  }

  /**
   * How far each followed file has been read (bytes). The record's offset, on disk, stops short of
   * lines gathered for a notice not yet told: sbd killed inside a coalesce window reads them again
   * after its restart and tells them then, instead of losing them. It moves on once they are told.
   */
  private readonly readTo = new Map<string, number>();

  private onFollowed(file: string): boolean {
    const id = this.byFile.get(file);
    if (id === undefined) return false;
    const r = this.records.get(id);
    if (!r || !live(r)) return true;
    const from = this.readTo.get(id) ?? r.offset ?? 0;
    const read = readAppended(file, from, OUTPUT_CAP_BYTES);
    if (read.offset === from && read.lines.length === 0) return true;
    this.readTo.set(id, read.offset);
    const untold = this.pending.get(id)?.batch !== undefined;
    this.output(id, read.lines);
    const gathering = this.pending.get(id)?.batch !== undefined;
    // on record: where the untold batch began (this read's start; 0 when the file was truncated and read anew)
    const offset = untold ? r.offset : gathering ? (read.offset >= from ? from : 0) : read.offset;
    this.save({ ...r, offset, ticks: r.ticks + (this.runner(r)?.countsTicks ? 0 : 1), truncations: r.truncations + (read.skippedBytes > 0 ? 1 : 0) });
    return true;
  }

  /** New output of a monitor: matches of notifyOn gathered into one notice per coalesce span. */
  private output(id: string, lines: readonly string[]): void {
    const r = this.records.get(id);
    if (!r) return;
    if (lines.length > 0) for (const o of this.observers) o.lines?.(id, lines);
    const spec = r.spec;
    const matchers = compileMatchers(spec);
    const slot = this.pending.get(id) ?? { batch: undefined, timer: undefined };
    slot.batch = addLines(slot.batch, lines, matchers, spec.maxLines, this.host.monotonicMs());
    this.pending.set(id, slot);
    if (slot.batch && !slot.timer) {
      slot.timer = setTimeout(() => this.flushNotice(id), Math.max(0, dueAtMs(slot.batch, spec.coalesceSeconds) - this.host.monotonicMs()));
      slot.timer.unref();
    }
  }

  private flushNotice(id: string): void {
    const slot = this.pending.get(id);
    const r = this.records.get(id);
    if (!slot || !r) return;
    slot.timer = undefined;
    const notice = flush(slot.batch, r.spec.coalesceSeconds, Number.POSITIVE_INFINITY);
    slot.batch = undefined;
    if (!notice) return;
    const name = r.spec.label ?? this.handle(id);
    const readTo = this.readTo.get(id);
    const entry = this.host.notify(r.sessionId, {
      atMs: Date.now(), from: this.handle(id), kind: 'match',
      text: `${name}: ${notice.lines.length + notice.truncated} new line${notice.lines.length + notice.truncated === 1 ? '' : 's'} matched`, lines: notice.lines,
      ...(notice.truncated ? { truncated: notice.truncated } : {}),
      monitor: id, ...(readTo !== undefined ? { through: readTo } : {}),
    });
    // told: the record's offset moves past them. A crash before this save leaves the offset where
    // the lines began; the notice's `through` says how far they went (recovery resumes there).
    // Not written (the inbox could not be, sbd warned): the offset stays where they began, so an
    // sbd restarted before more lines are read tells them then (more lines read move it on).
    const now = this.records.get(id);
    if (readTo !== undefined && now && entry) this.save({ ...now, offset: readTo, toldNotice: entry.id });
    for (const o of this.observers) o.told?.(id);
  }

  private readonly unitChecks = new Map<string, Promise<void>>();

  /** A unit changed (systemd's signal): a spawn's exit receipt and crash-loop fuse. One check
   * of a unit at a time (a transition comes as several PropertiesChanged): told once. */
  onUnit(unit: string): Promise<void> {
    return this.serially(unit, () => this.checkUnit(unit));
  }

  /** Run `f` after what is under way on `unit` (its checks, a restart), before what comes next. */
  private serially(unit: string, f: () => Promise<void>): Promise<void> {
    const next = (this.unitChecks.get(unit) ?? Promise.resolve()).catch(() => undefined).then(f);
    this.unitChecks.set(unit, next);
    void next.finally(() => {
      if (this.unitChecks.get(unit) === next) this.unitChecks.delete(unit);
    }).catch(() => undefined);
    return next;
  }

  private async checkUnit(unit: string): Promise<void> {
    // a poll has two units (its timer and its service): both are named after the monitor
    const byName = monitorIdOfUnit(unit);
    const r = (byName === undefined ? undefined : this.records.get(byName)) ?? [...this.records.values()].find((x) => x.unit?.name === unit);
    // Only a running monitor's units are read: reading a unit that is gone makes systemd load
    // a stub of it and unload it again, whose UnitRemoved would come back here, round and round
    // for a suspended poll whose units are gone.
    // one not yet recovered is recovery's to judge (its unit read then): a runner would act on it
    // for a session not yet adopted, under the last sbd's lease
    if (!r || r.lifecycle !== 'running' || this.unrecovered(r)) return;
    const info: UnitInfo | undefined = await this.host.getUnit(unit);
    const now = this.records.get(r.id);
    if (!now || now.lifecycle !== 'running') return; // stopped by us meanwhile: that stop is the receipt, not an exit
    this.runner(now)?.onUnit?.(this.kit, now, info, unit);
  }

  /** Stop one monitor (its own unit or watch only). */
  async stop(sessionId: string, handleOrId: string, why = 'stopped'): Promise<MonitorRecord> {
    return this.end(this.find(sessionId, handleOrId).id, 'stopped', why);
  }

  /** The session's monitor by handle, id or label; unknown or ambiguous is a bad request. */
  find(sessionId: string, handleOrId: string): MonitorRecord & { handle: string } {
    // by label too: a record keeps its label in its spec
    const found = resolveHandle(this.list(sessionId).map((r) => ({ ...r, label: r.spec.label })), handleOrId);
    if ('error' in found) throw new MonitorRequestError(found.error);
    const { label: _label, ...r } = found;
    return r;
  }

  /** End a monitor as `lifecycle` (stopped, expired): saved first, then its runner stops what runs. */
  async end(id: string, lifecycle: 'stopped' | 'expired', why: string): Promise<MonitorRecord> {
    const r = this.must(id);
    // saved first: the unit's own end, told by systemd while it stops, is then not taken for an exit
    const ended: MonitorRecord = { ...r, lifecycle, reason: why };
    this.save(ended);
    await this.runner(r)?.stop(this.kit, ended);
    return this.records.get(id) ?? ended;
  }

  /** The record as it is now. */
  get(id: string): MonitorRecord | undefined {
    return this.records.get(id);
  }

  /** Change a record's fields (the lifecycle's timers keep the expiry there). */
  patch(id: string, fields: Partial<MonitorRecord>): void {
    const r = this.records.get(id);
    if (r) this.save({ ...r, ...fields });
  }

  /** Tell the monitor's agent (its label or handle leads the text). */
  tell(id: string, kind: string, text: string): void {
    const r = this.records.get(id);
    if (r) this.kit.tell(r, kind, text);
  }

  observe(o: MonitorObserver): void {
    this.observers.push(o);
  }

  /** Run a waiting monitor again (recover approve): its runner's own restart, else its begin. */
  async restart(id: string): Promise<MonitorRecord> {
    const r = this.must(id);
    const session = this.host.session(r.sessionId);
    if (!session || session.invocationId !== r.sessionInvocation) throw new MonitorRequestError(`its session "${r.sessionId}" has ended: nothing to run it for (sbctl monitor recover reject ${this.handle(id)})`);
    const runner = this.runner(r);
    if (!runner) throw new MonitorRequestError(`a ${r.spec.type} monitor is not run by this sbd`);
    const { reason: _reason, exit: _exit, ...rest } = r;
    const again: MonitorRecord = { ...rest, lifecycle: 'running', owner: this.host.owner, consecutiveFailures: 0 };
    const run = async (): Promise<void> => {
      this.save(again);
      await (runner.restart ? runner.restart(this.kit, again) : runner.begin(this.kit, again, session));
    };
    // a unit's events while it is reset and started anew (its old self unloaded, the new one not yet
    // active) are read after the restart, not taken for an exit of the monitor running again
    await (r.unit ? this.serially(r.unit.name, run) : run());
    return this.records.get(id) ?? again;
  }

  /** Stop what is left of a monitor and move its record to archive/ with why (recover reject). */
  async reject(id: string, why: string): Promise<string> {
    const r = await this.end(id, 'stopped', why);
    await this.runner(r)?.discard?.(this.kit, r);
    return this.archive(id, why);
  }

  /** Forget a monitor and move its record to archive/ (never deleted); nothing is stopped here. */
  archive(id: string, why: string): string {
    this.records.delete(id);
    return archiveRecord(this.host.recordsDir, recordFile(this.host.recordsDir, id), why);
  }

  /** The session ended: its monitors end with it (a spawn's unit is stopped unless detached). */
  async sessionEnded(sessionId: string): Promise<void> {
    for (const r of this.list(sessionId).filter(live)) {
      if (r.spec.type === 'spawn' && r.spec.detached) continue;
      await this.stop(sessionId, r.id, 'its session ended');
    }
  }

  close(): void {
    // sbd stops: what was gathering is told now, not lost (its lines' offset is saved already)
    for (const [id, slot] of this.pending) {
      if (!slot.timer) continue;
      clearTimeout(slot.timer);
      this.flushNotice(id);
    }
    for (const o of this.observers) o.closed?.();
    for (const runner of new Set(Object.values(RUNNERS))) runner.close?.(this.kit);
  }
}
