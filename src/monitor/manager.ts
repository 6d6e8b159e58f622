/**
 * sbd's monitors (issue 13): takes a request, decides reuse, keeps the record, runs what systemd
 * does not (a tail's reading, notices into the inbox) and lets systemd run the rest (a spawn is a
 * transient service: monitor/unit.ts). The decisions are the pure modules beside it (spec, safety,
 * identity, notices, recovery); this is the thin shell that applies them.
 *
 * Supported here: spawn and tail. file, poll, process, ssh and http are checked (a poll with work
 * in it is quarantined with the reason) and refused as not yet run by this sbd.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { InboxEntry } from '../inbox/store';
import type { TransientProperty, UnitInfo } from '../systemd/types';
import { decideReuse, handleOf, newMonitorId, resolveHandle, sourceHash } from './identity';
import { type Pending, addLines, compileMatchers, dueAtMs, flush } from './notices';
import { judgeProbe } from './safety';
import { type MonitorSpec, OUTPUT_CAP_BYTES, expiresAtMs, parseMonitorSpec } from './spec';
import type { RecoveryPlan } from './recovery';
import { type CorruptRecord, type MonitorRecord, archiveRecord, loadRecords, removeRecord, saveRecord } from './store';
import { readAppended } from './tail-read';
import { CRASH_LOOP_BURST, spawnUnitName, spawnUnitProperties } from './unit';

/** What a monitor's session is to the manager. */
export interface MonitorSession {
  id: string;
  unit: string;
  invocationId: string;
  slice: string;
  /** The session's own brake: a spawn gets the same (it is the session's work, outside its scope). */
  memoryHigh: number;
}

export interface MonitorHost {
  recordsDir: string;
  /** Where spawns write their output (a runtime directory: it need not survive a reboot). */
  outputDir: string;
  startTransientService(name: string, props: readonly TransientProperty[]): Promise<void>;
  stopUnit(name: string): Promise<void>;
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

export type StartAnswer = { answer: 'created' | 'reused' | 'replaced' | 'quarantined'; id: string; handle: string; reason?: string };

/** A request the manager refuses (bad spec, unknown session, a type not run here): exit code 2 in sbctl. */
export class MonitorRequestError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'MonitorRequestError';
  }
}

const RUN_HERE = new Set(['spawn', 'tail']);
const live = (r: MonitorRecord): boolean => r.lifecycle === 'running' || r.lifecycle === 'suspended' || r.lifecycle === 'awaiting-confirmation';

export class MonitorManager {
  private readonly records = new Map<string, MonitorRecord>();
  private readonly pending = new Map<string, { batch: Pending | undefined; timer: NodeJS.Timeout | undefined }>();
  private readonly byFile = new Map<string, string>();

  constructor(private readonly host: MonitorHost) {}

  private corrupt: CorruptRecord[] = [];

  /** The records on disk (after a restart); what to do with them is recovery's (monitor/recovery.ts). */
  loadAll(): { records: MonitorRecord[]; corrupt: number } {
    const { records, corrupt } = loadRecords(this.host.recordsDir);
    for (const r of records) this.records.set(r.id, r);
    this.corrupt = corrupt;
    return { records, corrupt: corrupt.length };
  }

  /** Carry out a recovery plan: resume, reuse, expire, quarantine, report gone, compact. */
  apply(plan: RecoveryPlan): void {
    for (const c of this.corrupt) archiveRecord(this.host.recordsDir, c.file, c.why); // kept aside with why, never dropped
    this.corrupt = [];
    for (const { id, action, why } of plan.actions) {
      const r = this.records.get(id);
      if (!r) continue;
      const name = r.spec.label ?? this.handle(id);
      switch (action) {
        case 'resume':
          if (r.spec.type === 'tail') {
            this.follow(id, r.spec.path);
            this.onFile(r.spec.path); // what came while sbd was away, from the saved offset
          }
          break;
        case 'reuse':
          this.follow(id, path.join(this.host.outputDir, `${id}.log`));
          this.onFile(path.join(this.host.outputDir, `${id}.log`));
          break;
        case 'await-confirmation':
        case 'expire':
        case 'quarantine':
        case 'report-gone': {
          const lifecycle = action === 'await-confirmation' ? 'awaiting-confirmation' : action === 'expire' ? 'expired' : action === 'quarantine' ? 'quarantined' : 'gone';
          this.save({ ...r, lifecycle, reason: why });
          if (action === 'expire' && r.unit) void this.host.stopUnit(r.unit.name).catch(() => undefined);
          if (action === 'report-gone' || action === 'quarantine') this.host.notify(r.sessionId, { atMs: Date.now(), from: this.handle(id), kind: lifecycle, text: `${name}: ${why}` });
          break;
        }
        case 'compact':
          this.records.delete(id);
          removeRecord(this.host.recordsDir, id);
          break;
        case 'keep':
          break;
      }
    }
  }

  list(sessionId?: string): Array<MonitorRecord & { handle: string }> {
    const all = [...this.records.values()];
    const ids = all.map((r) => r.id);
    return all.filter((r) => sessionId === undefined || r.sessionId === sessionId).map((r) => ({ ...r, handle: handleOf(r.id, ids) }));
  }

  private handle(id: string): string {
    return handleOf(id, [...this.records.keys()]);
  }

  private save(r: MonitorRecord): void {
    this.records.set(r.id, r);
    saveRecord(this.host.recordsDir, r);
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
    const hash = sourceHash(spec);
    const mine = [...this.records.values()].filter((r) => r.sessionId === sessionId);
    const decision = decideReuse(spec, hash, mine.map((r) => ({ id: r.id, reuseKey: r.spec.reuseKey, sourceHash: r.sourceHash, live: live(r) })));
    if (decision.answer === 'reused') return { answer: 'reused', id: decision.id, handle: this.handle(decision.id) };
    const record: MonitorRecord = {
      id: newMonitorId(), sessionId, sessionUnit: session.unit, sessionInvocation: session.invocationId, spec, sourceHash: hash,
      lifecycle: 'running', createdAtMs: Date.now(), owner: this.host.owner, ticks: 0, consecutiveFailures: 0, truncations: 0,
    };
    if (spec.type === 'poll' || spec.type === 'ssh') {
      const verdict = judgeProbe(spec.argv);
      if (!verdict.ok) {
        this.save({ ...record, lifecycle: 'quarantined', reason: verdict.reason });
        return { answer: 'quarantined', id: record.id, handle: this.handle(record.id), reason: verdict.reason };
      }
    }
    if (!RUN_HERE.has(spec.type)) throw new MonitorRequestError(`a ${spec.type} monitor is checked but not yet run by this sbd (spawn and tail are)`);
    if (decision.answer === 'replaced') await this.stop(sessionId, decision.id, 'replaced');
    await this.begin(record, session);
    return { answer: decision.answer, id: record.id, handle: this.handle(record.id) };
  }

  private async begin(record: MonitorRecord, session: MonitorSession): Promise<void> {
    const spec = record.spec;
    if (spec.type === 'spawn') {
      const program = spec.argv[0] ?? '';
      const programPath = path.isAbsolute(program) ? program : this.host.resolveProgram(program);
      if (programPath === undefined) throw new MonitorRequestError(`"${program}" is not on sbd's PATH: give its absolute path`);
      fs.mkdirSync(this.host.outputDir, { recursive: true, mode: 0o700 });
      const output = path.join(this.host.outputDir, `${record.id}.log`);
      fs.closeSync(fs.openSync(output, 'a', 0o600));
      const expires = expiresAtMs(spec);
      const unit = spawnUnitName(record.id);
      this.save({ ...record, unit: { name: unit }, offset: 0 });
      this.follow(record.id, output);
      try {
        await this.host.startTransientService(unit, spawnUnitProperties({
          monitorId: record.id, handle: this.handle(record.id), label: spec.label, sessionId: session.id, slice: session.slice,
          argv: spec.argv, programPath, cwd: spec.cwd, outputFile: output, memoryHighBytes: session.memoryHigh === Infinity ? 2 ** 62 : session.memoryHigh,
          runtimeMaxS: expires === undefined ? undefined : Math.max(1, (expires - Date.now()) / 1000),
        }));
      } catch (err) {
        this.unfollow(output);
        this.save({ ...record, lifecycle: 'gone', reason: `systemd refused to start it: ${(err as Error).message}` });
        throw new MonitorRequestError(`systemd refused to start the monitor's unit ${unit}: ${(err as Error).message}`);
      }
      const info = await this.host.getUnit(unit);
      this.save({ ...this.must(record.id), unit: { name: unit, ...(info?.invocationId ? { invocationId: info.invocationId } : {}) } });
      return;
    }
    if (spec.type === 'tail') {
      let offset = 0;
      try {
        offset = spec.fromStart ? 0 : fs.statSync(spec.path).size;
      } catch {
        offset = 0; // not there yet: read from its start when it comes
      }
      this.save({ ...record, offset });
      this.follow(record.id, spec.path);
    }
  }

  private must(id: string): MonitorRecord {
    const r = this.records.get(id);
    if (!r) throw new Error(`monitor ${id} vanished`);
    return r;
  }

  private follow(id: string, file: string): void {
    this.byFile.set(file, id);
    try {
      this.host.watchFile(file);
    } catch (err) {
      this.host.log('warn', 'cannot watch a monitored file yet', { monitor: id, file, err });
    }
  }

  private unfollow(file: string): void {
    this.byFile.delete(file);
    this.host.unwatchFile(file);
  }

  /** A watched file changed; true when it is a monitor's. */
  onFile(file: string): boolean {
    const id = this.byFile.get(file);
    if (id === undefined) return false;
    const r = this.records.get(id);
    if (!r || !live(r)) return true;
    const read = readAppended(file, r.offset ?? 0, OUTPUT_CAP_BYTES);
    if (read.offset === r.offset && read.lines.length === 0) return true;
    this.save({ ...r, offset: read.offset, ticks: r.ticks + 1, truncations: r.truncations + (read.skippedBytes > 0 ? 1 : 0) });
    const spec = r.spec;
    const matchers = compileMatchers(spec);
    const slot = this.pending.get(id) ?? { batch: undefined, timer: undefined };
    slot.batch = addLines(slot.batch, read.lines, matchers, spec.maxLines, this.host.monotonicMs());
    this.pending.set(id, slot);
    if (slot.batch && !slot.timer) {
      slot.timer = setTimeout(() => this.flushNotice(id), Math.max(0, dueAtMs(slot.batch, spec.coalesceSeconds) - this.host.monotonicMs()));
      slot.timer.unref();
    }
    return true;
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
    this.host.notify(r.sessionId, {
      atMs: Date.now(), from: this.handle(id), kind: 'match',
      text: `${name}: ${notice.lines.length + notice.truncated} new line${notice.lines.length + notice.truncated === 1 ? '' : 's'} matched`, lines: notice.lines,
      ...(notice.truncated ? { truncated: notice.truncated } : {}),
    });
  }

  private readonly unitChecks = new Map<string, Promise<void>>();

  /** A unit changed (systemd's signal): a spawn's exit receipt and crash-loop fuse. One check
   * of a unit at a time (a transition comes as several PropertiesChanged): told once. */
  onUnit(unit: string): Promise<void> {
    const next = (this.unitChecks.get(unit) ?? Promise.resolve()).then(() => this.checkUnit(unit));
    this.unitChecks.set(unit, next);
    void next.finally(() => {
      if (this.unitChecks.get(unit) === next) this.unitChecks.delete(unit);
    }).catch(() => undefined);
    return next;
  }

  private async checkUnit(unit: string): Promise<void> {
    const r = [...this.records.values()].find((x) => x.unit?.name === unit);
    if (!r || !live(r)) return;
    const info = await this.host.getUnit(unit);
    if (info && (info.activeState === 'active' || info.activeState === 'activating' || info.activeState === 'reloading')) return;
    const now = this.records.get(r.id);
    if (!now || !live(now)) return; // stopped by us meanwhile: that stop is the receipt, not an exit
    // A unit systemd has unloaded ended well: it collects inactive units, never failed ones
    // (CollectMode=inactive, the default), so the receipt of a gone unit is a clean exit.
    const code = info?.execMainCode === 2 || info?.execMainCode === 3 ? 'killed' : 'exited';
    const exit = { code, status: info ? (info.execMainStatus ?? 0) : 0 };
    // The fuse blew: systemd refused the next automatic restart. Its Result says so only where no
    // earlier failure set it: on an auto-restart systemd 252 keeps "exit-code" (guest 48), so the
    // restarts it made count too.
    const crashLoop = info?.result === 'start-limit-hit' || (info?.activeState === 'failed' && (info.nRestarts ?? 0) >= CRASH_LOOP_BURST);
    const lifecycle = crashLoop ? 'quarantined' : 'stopped';
    const reason = crashLoop ? 'it crashed again and again: systemd stopped restarting it (start-limit-hit); sbctl monitor recover decides' : `it ${code === 'killed' ? 'was killed by signal' : 'exited with status'} ${exit.status}`;
    this.save({ ...r, lifecycle, reason, exit });
    const name = r.spec.label ?? this.handle(r.id);
    this.host.notify(r.sessionId, { atMs: Date.now(), from: this.handle(r.id), kind: crashLoop ? 'quarantined' : 'exit', text: `${name}: ${reason}` });
  }

  /** Stop one monitor (its own unit or watch only). */
  async stop(sessionId: string, handleOrId: string, why = 'stopped'): Promise<MonitorRecord> {
    const found = resolveHandle(this.list(sessionId), handleOrId);
    if ('error' in found) throw new MonitorRequestError(found.error);
    const r = this.must(found.id);
    // saved first: the unit's own end, told by systemd while it stops, is then not taken for an exit
    const stopped: MonitorRecord = { ...r, lifecycle: 'stopped', reason: why };
    this.save(stopped);
    if (r.spec.type === 'spawn' && r.unit) {
      this.unfollow(path.join(this.host.outputDir, `${r.id}.log`));
      await this.host.stopUnit(r.unit.name).catch((err: unknown) => this.host.log('warn', 'stopping a monitor unit failed', { monitor: r.id, unit: r.unit?.name, err }));
    } else if (r.spec.type === 'tail') {
      this.unfollow(r.spec.path);
    }
    return stopped;
  }

  /** The session ended: its monitors end with it (a spawn's unit is stopped unless detached). */
  async sessionEnded(sessionId: string): Promise<void> {
    for (const r of this.list(sessionId).filter(live)) {
      if (r.spec.type === 'spawn' && r.spec.detached) continue;
      await this.stop(sessionId, r.id, 'its session ended');
    }
  }

  close(): void {
    for (const slot of this.pending.values()) if (slot.timer) clearTimeout(slot.timer);
  }
}
