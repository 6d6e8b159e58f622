/**
 * sbd's face on the user bus, for sbctl and other tools, typed as systemd types its own
 * interfaces (src/daemon/bus-types.ts): the properties Version, Pid, UptimeUSec, Feed,
 * ObserveOnly, Slices and ArbitratesSlices; the methods ListSessions() and ListSlices(), arrays
 * of structs, and GetStatus(), all of that as one JSON text; the signals Incident(type, unit, session, µs, message, observe-only, figures) and
 * Notice (a session's inbox: src/inbox/).
 * Exported without decorators, which dbus-next cannot use from TypeScript here (design.md §9).
 */
import * as dbus from 'dbus-next';
import type { ServiceHealth, SessionRow, SliceRow } from '../sessions/status';
import { SERVICE_INTERFACE, SERVICE_NAME, SERVICE_PATH } from './bus-name';
import { MonitorRequestError, type MonitorManager } from '../monitor/manager';
import { approve, collect, inspect, reject, stopAll } from '../monitor/lifecycle';
import {
  adoptingToBus, BAD_REQUEST, GC_SIGNATURE, type GcTuple, INCIDENT_SIGNATURE, MONITOR_SIGNATURE, MONITOR_STATE_SIGNATURE, type MonitorStateTuple, type MonitorTuple, figuresFromBus, gcToBus, type IncidentArgs,
  receiptToBus, SESSION_SIGNATURE, SLICE_SIGNATURE, type SessionTuple, type SliceTuple, incidentToBus, sessionToBus, sliceToBus, usecToBus,
} from './bus-types';
import { statusToJson } from './status-json';
import { encodeSignal } from '../bus-lite/wire';
import type { InboxEntry } from '../inbox/store';
import type { Incident } from './incidents';

/** DBUS_NAME_FLAG_DO_NOT_QUEUE: fail at once when another sbd holds the name. */
const DO_NOT_QUEUE = 4;
/** DBUS_REQUEST_NAME_REPLY_PRIMARY_OWNER. */
const PRIMARY_OWNER = 1;

/** What sbd's interface reports, each part read when asked. */
export interface StatusSource {
  health(): ServiceHealth;
  /** sbd's rows come from its last reading, read first where too old (daemon/status-figures.ts);
   * the sessions are those listed at the call, before any await. */
  sessions(): SessionRow[] | Promise<SessionRow[]>;
  /** undefined when sbd does not arbitrate slices. */
  slices(): SliceRow[] | Promise<SliceRow[]> | undefined;
  /** Whether slices() has rows, without reading them (by default: slices() is not undefined). */
  arbitratesSlices?(): boolean;
}

class ManagerInterface extends dbus.interface.Interface {
  constructor(
    private readonly source: StatusSource,
    private readonly monitors: MonitorManager | undefined,
  ) {
    super(SERVICE_INTERFACE);
  }

  private mons(): MonitorManager {
    if (!this.monitors) throw new dbus.DBusError(BAD_REQUEST, 'this sbd runs no monitors');
    return this.monitors;
  }

  private static asBusError(err: unknown): Error {
    return err instanceof MonitorRequestError ? new dbus.DBusError(BAD_REQUEST, err.message) : (err as Error);
  }

  /** StartMonitor(session, spec a{sv}) -> (answer, id, handle, reason): created, reused, replaced or quarantined. */
  async StartMonitor(session: string, spec: Record<string, dbus.Variant>): Promise<[string, string, string, string]> {
    try {
      const a = await this.mons().start(session, figuresFromBus(spec));
      return [a.answer, a.id, a.handle, a.reason ?? ''];
    } catch (err) {
      throw ManagerInterface.asBusError(err);
    }
  }

  /** ListMonitors(session; "" for all) -> the monitors with their lifecycle. */
  ListMonitors(session: string): MonitorTuple[] {
    return this.mons().list(session === '' ? undefined : session).map((m) => [m.id, m.handle, m.spec.label ?? '', m.spec.type, m.lifecycle, m.reason ?? '', m.unit?.name ?? '', m.sessionId]);
  }

  /** StopMonitor(session, handle) -> its lifecycle now. Only its own unit or watch is touched. */
  async StopMonitor(session: string, handle: string): Promise<string> {
    try {
      return (await this.mons().stop(session, handle)).lifecycle;
    } catch (err) {
      throw ManagerInterface.asBusError(err);
    }
  }

  /** ApproveMonitor(session, handle) -> (handle, lifecycle): a waiting monitor runs again (recover approve). */
  async ApproveMonitor(session: string, handle: string): Promise<MonitorStateTuple> {
    try {
      const a = await approve(this.mons(), session, handle);
      return [a.handle, a.lifecycle];
    } catch (err) {
      throw ManagerInterface.asBusError(err);
    }
  }

  /** RejectMonitor(session, handle) -> (handle, archived to): what is left is stopped, the record archived. */
  async RejectMonitor(session: string, handle: string): Promise<MonitorStateTuple> {
    try {
      const a = await reject(this.mons(), session, handle);
      return [a.handle, a.archivedTo];
    } catch (err) {
      throw ManagerInterface.asBusError(err);
    }
  }

  /** InspectMonitor(session, handle) -> the receipt as a{sv} (bus-types.ts receiptToBus). */
  async InspectMonitor(session: string, handle: string): Promise<Record<string, dbus.Variant>> {
    try {
      return receiptToBus(await inspect(this.mons(), session, handle));
    } catch (err) {
      throw ManagerInterface.asBusError(err);
    }
  }

  /** StopAllMonitors(session) -> (handle, lifecycle) of each monitor of that session it stopped; no other session's. */
  async StopAllMonitors(session: string): Promise<MonitorStateTuple[]> {
    try {
      if (session === '') throw new MonitorRequestError('which session? stop --all stops one session\'s monitors only');
      return (await stopAll(this.mons(), session)).map((s) => [s.handle, s.lifecycle]);
    } catch (err) {
      throw ManagerInterface.asBusError(err);
    }
  }

  /** CollectMonitors(apply) -> what gc archives (apply) or would (dry run). Never stops anything. */
  async CollectMonitors(apply: boolean): Promise<GcTuple[]> {
    try {
      return (await collect(this.mons(), apply)).map(gcToBus);
    } catch (err) {
      throw ManagerInterface.asBusError(err);
    }
  }

  get Version(): string {
    return this.source.health().version;
  }

  get Pid(): number {
    return this.source.health().pid ?? 0;
  }

  get UptimeUSec(): bigint {
    return usecToBus(this.source.health().uptimeS);
  }

  get Feed(): string {
    return this.source.health().feed;
  }

  get ObserveOnly(): boolean {
    return this.source.health().observeOnly;
  }

  get Slices(): string[] {
    return this.source.health().slices;
  }

  /** While sbd adopts the sessions it found: [units read, units listed (-1 while listing)]; [] once done. */
  get Adopting(): number[] {
    return adoptingToBus(this.source.health().adopting);
  }

  get ArbitratesSlices(): boolean {
    return this.source.arbitratesSlices?.() ?? this.source.slices() !== undefined;
  }

  async ListSessions(): Promise<SessionTuple[]> {
    return (await this.source.sessions()).map(sessionToBus);
  }

  async ListSlices(): Promise<SliceTuple[]> {
    return ((await this.source.slices()) ?? []).map(sliceToBus);
  }

  /** Everything `sbctl status` shows, in one call and one text (src/daemon/status-json.ts says why). */
  async GetStatus(): Promise<string> {
    // sbd's health of the instant the sessions are listed (sessions() lists them at once, then
    // reads their figures over turns of the event loop): taken after, an adoption that ended
    // meanwhile made a report of part of the sessions that said it was done (guest 60-adopt in
    // CI: 70 of 100 sessions, "adopted")
    const service = this.source.health();
    const sessions = this.source.sessions();
    const slices = this.source.slices();
    return statusToJson({ service, sessions: await sessions, ...(slices !== undefined ? { slices: await slices } : {}) });
  }

  /** Emits the signal: dbus-next sends what a signal member returns. */
  Incident(args: IncidentArgs): IncidentArgs {
    return args;
  }

  /** A notice in a session's inbox: session, id, wall-clock µs, from, kind, text, lines, lines left out. */
  Notice(args: NoticeArgs): NoticeArgs {
    return args;
  }
}

/** Notice(session, id, wall-clock µs, from, kind, text, lines, truncated). */
export const NOTICE_SIGNATURE = 'sttsssasu';
export type NoticeArgs = [string, bigint, bigint, string, string, string, string[], number];

/** A NUL byte, which no D-Bus string may hold, as U+FFFD: a tailed file's line may carry one. */
const noNul = (text: string): string => (text.includes('\0') ? text.replaceAll('\0', '\uFFFD') : text);

export function noticeToBus(session: string, e: InboxEntry): NoticeArgs {
  return [session, BigInt(e.id), BigInt(Math.round(e.atMs * 1000)), e.from, e.kind, noNul(e.text), (e.lines ?? []).map(noNul), e.truncated ?? 0];
}

export function noticeFromBus(args: NoticeArgs): { session: string; entry: InboxEntry } {
  const [session, id, atUsec, from, kind, text, lines, truncated] = args;
  return { session, entry: { id: Number(id), atMs: Number(atUsec) / 1000, from, kind, text, ...(lines.length ? { lines } : {}), ...(truncated ? { truncated } : {}) } };
}

const READ = dbus.interface.ACCESS_READ;
ManagerInterface.configureMembers({
  properties: {
    Version: { signature: 's', access: READ },
    Pid: { signature: 'u', access: READ },
    UptimeUSec: { signature: 't', access: READ },
    Feed: { signature: 's', access: READ },
    ObserveOnly: { signature: 'b', access: READ },
    Slices: { signature: 'as', access: READ },
    ArbitratesSlices: { signature: 'b', access: READ },
    Adopting: { signature: 'ai', access: READ },
  },
  methods: {
    ListSessions: { inSignature: '', outSignature: `a${SESSION_SIGNATURE}` },
    ListSlices: { inSignature: '', outSignature: `a${SLICE_SIGNATURE}` },
    GetStatus: { inSignature: '', outSignature: 's' },
    StartMonitor: { inSignature: 'sa{sv}', outSignature: '(ssss)' },
    ListMonitors: { inSignature: 's', outSignature: `a${MONITOR_SIGNATURE}` },
    StopMonitor: { inSignature: 'ss', outSignature: 's' },
    ApproveMonitor: { inSignature: 'ss', outSignature: MONITOR_STATE_SIGNATURE },
    RejectMonitor: { inSignature: 'ss', outSignature: MONITOR_STATE_SIGNATURE },
    InspectMonitor: { inSignature: 'ss', outSignature: 'a{sv}' },
    StopAllMonitors: { inSignature: 's', outSignature: `a${MONITOR_STATE_SIGNATURE}` },
    CollectMonitors: { inSignature: 'b', outSignature: `a${GC_SIGNATURE}` },
  },
  signals: { Incident: { signature: INCIDENT_SIGNATURE }, Notice: { signature: NOTICE_SIGNATURE } },
});

export interface BusService {
  emitIncident(incident: Incident): void;
  emitNotice(session: string, entry: InboxEntry): void;
}

/** The name is ours already (claimServiceName took it at start). */
const ALREADY_OWNER = 4;

/** Another sbd runs for this user: this one must not touch anything. */
export class NameTakenError extends Error {
  constructor(owner: string | undefined) {
    super(`another sbd${owner ? ` (${owner})` : ''} owns ${SERVICE_NAME} on this user bus: only one may run per user, and it owns the sessions' saved state and the monitors`);
    this.name = 'NameTakenError';
  }
}

/**
 * Take sbd's well-known name, the lease on everything sbd owns (saved stops and deadlines, the
 * monitors): done first, before any of it is read, so that a second sbd started beside a running
 * one leaves at once having changed nothing. Throws NameTakenError when another sbd holds it.
 */
export async function claimServiceName(bus: dbus.MessageBus): Promise<void> {
  const reply = await bus.requestName(SERVICE_NAME, DO_NOT_QUEUE);
  if (reply === PRIMARY_OWNER || reply === ALREADY_OWNER) return;
  let owner: string | undefined;
  try {
    const answer = await bus.call(new dbus.Message({ destination: 'org.freedesktop.DBus', path: '/org/freedesktop/DBus', interface: 'org.freedesktop.DBus', member: 'GetNameOwner', signature: 's', body: [SERVICE_NAME] }));
    owner = answer?.body?.[0] as string | undefined;
  } catch {
    owner = undefined; // it left meanwhile: still refused, a restart will take the name
  }
  throw new NameTakenError(owner);
}

/** What of dbus-next's connection the signal writer uses (not in its types). */
type RawStream = { writable?: boolean; supportsUnixFd?: boolean; write(data: Buffer): boolean; cork?(): void; uncork?(): void };

/**
 * sbd's signals, marshalled by its own writer (bus-lite) and written to dbus-next's connection
 * as one message each, with a serial the bus hands out (newSerial). dbus-next's marshalling of one
 * Incident cost 10 % of sbd's CPU in issue 15's storm of 200 sessions (bench:storm profile), more
 * than the verdict it told. Where the connection is not a plain stream (fd passing negotiated,
 * or closed), dbus-next sends it as before.
 */
export function signalWriter(bus: dbus.MessageBus, fallback: (member: 'Incident' | 'Notice', body: unknown[]) => void, later: (fn: () => void) => void = setImmediate): (member: 'Incident' | 'Notice', signature: string, body: unknown[]) => void {
  let corked: RawStream | undefined;
  return (member, signature, body) => {
    const stream = (bus as unknown as { _connection?: { stream?: RawStream } })._connection?.stream;
    if (!stream || stream.writable !== true || stream.supportsUnixFd) return fallback(member, body);
    // The signals of one turn of the loop leave in one write (writev): in a storm a feed's timer
    // tells each verdict, and a write of its own per signal was 590 ms of sbd's main thread in the
    // 18 s of bench:storm's 200 verdicts (profile, issue 15 session 26). Corked, the connection's
    // other messages (calls, replies) queue behind them in order, until the loop's check phase.
    if (corked !== stream && stream.cork && stream.uncork) {
      stream.cork();
      corked = stream;
      later(() => {
        corked = undefined;
        stream.uncork?.();
      });
    }
    stream.write(encodeSignal(bus.newSerial(), { path: SERVICE_PATH, interface: SERVICE_INTERFACE, member, signature, body }));
  };
}

/** Export the interface under the well-known name (taken now unless claimServiceName took it). */
export async function exportService(bus: dbus.MessageBus, source: StatusSource, monitors?: MonitorManager): Promise<BusService> {
  const iface = new ManagerInterface(source, monitors);
  bus.export(SERVICE_PATH, iface);
  await claimServiceName(bus);
  const signal = signalWriter(bus, (member, body) => (member === 'Incident' ? iface.Incident(body as IncidentArgs) : iface.Notice(body as NoticeArgs)));
  return {
    emitIncident: (incident) => signal('Incident', INCIDENT_SIGNATURE, incidentToBus(incident)),
    emitNotice: (session, entry) => signal('Notice', NOTICE_SIGNATURE, noticeToBus(session, entry)),
  };
}
