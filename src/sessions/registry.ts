/**
 * The sessions sbd watches: every active scope or service of the configured slices. Adopted at
 * start from systemd, then kept current from UnitNew / UnitRemoved / PropertiesChanged.
 */
import { EventEmitter } from 'node:events';
import { cgroupDir } from '../cgroup/read';
import { readCgroupProcesses, rootProcess } from '../proc/table';
import { sessionId } from '../systemd/names';
import type { UnitEvent, UnitInfo, UserManager } from '../systemd/types';
import { readRecord, removeRecord } from './record';

export interface Session {
  unit: string;
  /** The SESSIONBRAKE_SESSION value: the unit name without its suffix. */
  id: string;
  invocationId: string;
  /** systemd's ControlGroup ("/user.slice/.../a.scope") and the directory behind it. */
  controlGroup: string;
  cgroupDir: string;
  slice: string;
  memoryHigh: number;
  memoryMax: number;
  memorySwapMax: number;
  /** The agent: from sbctl run's record (alive or not), else the root of the process tree. */
  agentPid: number | undefined;
  /** True when agentPid comes from sbctl run's record; false when it was inferred (the root). */
  agentFromRecord: boolean;
  /** Its start time (clock ticks after boot): a recycled pid is never taken for it. */
  agentStartTicks: number | undefined;
  heartbeat: string | undefined;
  /** false when `sbctl run --no-reap` made it: leftovers are told about, not stopped. */
  reap: boolean;
  adoptedAtMs: number;
}

const LIVE = new Set(['active', 'activating', 'reloading']);

/**
 * Where a state comes in one invocation's life: activating, active (or reloading), deactivating,
 * then inactive or failed. A unit read as "inactive" with its cgroup made is starting (systemd
 * sends UnitNew before the start job runs); an event that says "inactive" is its end.
 */
function stateOrder(state: string, from: 'read' | 'event'): number {
  switch (state) {
    case 'inactive': return from === 'read' ? 0 : 4;
    case 'activating': return 1;
    case 'active': case 'reloading': return 2;
    case 'deactivating': return 3;
    default: return 4; // failed, maintenance
  }
}
/** Units read at once while adopting: enough to keep the bus and systemd busy (a read is a round
 * trip), few enough that the watchdog's ping and a caller's GetStatus are not queued behind
 * thousands of replies. */
const ADOPT_IN_FLIGHT = 16;

/**
 * Reads of units started for systemd's events and not yet answered, at most: the same bound as
 * adopting, for the same reason. A burst of new scopes (200 made within 30 s, bench:storm) brought
 * thousands of signals; each started its read at once, from inside dbus-next's handling of the
 * bus's data, and every reply's handler sent the next Get: one turn of the event loop ran for
 * more than the watchdog's 30 s (libuv reads up to 32 buffers of a busy socket in one turn), and
 * systemd killed sbd. Events now wait in a queue, one entry per unit (the latest), and the reads
 * start from it on later turns, as earlier ones are answered.
 */
export const EVENT_READS_IN_FLIGHT = 16;

export interface RegistryEvents {
  added: [Session];
  /** The session, and who said it is over: "systemd", or the kernel's signal (ended()). */
  removed: [Session, string];
}

export class SessionRegistry extends EventEmitter<RegistryEvents> {
  private readonly byUnit = new Map<string, Session>();
  /** Units being looked up, so that a burst of events costs one lookup. */
  private readonly pending = new Set<string>();
  /** Units with an event not yet handled, each with its latest event (EVENT_READS_IN_FLIGHT). */
  private readonly queued = new Map<string, UnitEvent>();
  /** Reads started for events and not yet answered. */
  private eventReads = 0;
  private drainScheduled = false;
  /** Units with an event after their lookup began: that lookup may have read the state before
   * the event (a new scope reads "inactive" while systemd starts it), so it is read again. */
  private readonly stale = new Set<string>();
  /** For a stale unit: the values of the events that came during its lookup (the last event's
   * state and invocation), or null when one came without them (it is read again then). */
  private readonly seenMeanwhile = new Map<string, { activeState: string; invocationId: string } | null>();
  /** While adopt() runs: the units read so far of those listed (listed: null while the listing
   * runs); undefined when not adopting. */
  adopting: { adopted: number; listed: number | null } | undefined;
  /** Sessions the kernel said were over (unit -> invocation), until systemd removes the unit:
   * a lookup that still reads the unit as active must not adopt the same invocation again. */
  private readonly over = new Map<string, string>();
  /** Live units read and found outside the slices (unit -> invocation): a unit's slice is fixed
   * while it runs, so a later change of the same invocation needs no read (sbd.service itself
   * changes with each STATUS= it sends). */
  private readonly elsewhere = new Map<string, string>();

  constructor(
    private readonly manager: UserManager,
    private readonly slices: readonly string[],
    private readonly records: string | undefined,
    private readonly onWarn: (msg: string, fields: Record<string, unknown>) => void = () => {},
  ) {
    super();
  }

  /** Adopt every existing session, then follow systemd's events: follow(), then adopt(). */
  async start(): Promise<void> {
    this.follow();
    await this.adopt();
  }

  /** Follow systemd's events from now on (before adopt(): an event during the listing is not lost). */
  follow(): void {
    this.manager.onUnitEvent((e) => {
      if (!/\.(scope|service)$/.test(e.unit)) return;
      if (e.type === 'unit-removed') {
        this.queued.delete(e.unit);
        this.over.delete(e.unit);
        this.elsewhere.delete(e.unit);
        this.drop(e.unit);
        if (this.pending.has(e.unit)) this.markStale(e.unit); // its lookup must not bring it back
        return;
      }
      if (this.pending.has(e.unit) && !this.queued.has(e.unit)) {
        // its lookup in flight reads it again, or takes the event's values: no read of its own
        this.markStale(e.unit, e.type === 'unit-changed' ? e : undefined);
        return;
      }
      this.queued.delete(e.unit); // (re)inserted last: the queue runs in the order of the units' latest events
      this.queued.set(e.unit, e);
      this.scheduleDrain();
    });
  }

  /** Units whose events wait for a read to start (the tests look). */
  get eventsQueued(): number {
    return this.queued.size;
  }

  private scheduleDrain(): void {
    if (this.drainScheduled) return;
    this.drainScheduled = true;
    setImmediate(() => {
      this.drainScheduled = false;
      this.drain();
    }).unref();
  }

  /** Handle queued events while fewer than EVENT_READS_IN_FLIGHT of their reads are unanswered. */
  private drain(): void {
    for (const [unit, e] of this.queued) {
      if (this.eventReads >= EVENT_READS_IN_FLIGHT) return;
      this.queued.delete(unit);
      const values = e.type === 'unit-changed' ? e : undefined;
      if (this.pending.has(unit)) {
        this.markStale(unit, values); // the lookup in flight reads it again, or takes the event's values
        continue;
      }
      const read = e.type === 'unit-changed' ? this.changedLightly(e) : false;
      if (read === true) continue; // handled without a read
      this.eventReads++;
      void (read === false ? this.refresh(unit, values) : read).finally(() => {
        this.eventReads--;
        if (this.queued.size > 0) this.scheduleDrain();
      });
    }
  }

  /**
   * A change whose signal says enough is taken without reading the whole unit again (getUnit is
   * ten Gets: a storm's 200 scopes made the registry 11-14 % of sbd's CPU, bench:storm): a unit
   * no longer live is dropped, or not adopted; a session still live in the same invocation has
   * only its limits read (someone may have changed them); a live unit read before outside the
   * slices, in the same invocation, is left alone. True: handled; a promise: its limits' read,
   * started. False: read it all (a unit being looked up, a new invocation, a unit not known yet,
   * or a signal without the values).
   */
  private changedLightly(e: { unit: string; activeState?: string; invocationId?: string }): boolean | Promise<void> {
    if (e.activeState === undefined || this.pending.has(e.unit)) return false;
    const known = this.byUnit.get(e.unit);
    if (!known && e.invocationId !== undefined && LIVE.has(e.activeState) && this.elsewhere.get(e.unit) === e.invocationId) return true;
    if (!LIVE.has(e.activeState)) {
      this.elsewhere.delete(e.unit);
      if (known && (e.invocationId === undefined || e.invocationId === known.invocationId)) this.drop(e.unit);
      return known === undefined || e.invocationId === undefined || e.invocationId === known.invocationId;
    }
    const getLimits = this.manager.getUnitLimits?.bind(this.manager);
    if (!known || !getLimits || e.invocationId !== known.invocationId) return false; // (without an InvocationID: read it all)
    this.pending.add(e.unit);
    return getLimits(e.unit)
      .then((limits) => {
        if (limits && this.byUnit.get(e.unit) === known) Object.assign(known, limits);
      }, (err: unknown) => this.onWarn('cannot read a unit from systemd', { unit: e.unit, err }))
      .finally(() => {
        this.pending.delete(e.unit);
        this.seenMeanwhile.delete(e.unit);
        // another event meanwhile: read it all, its turn in the queue
        if (this.stale.delete(e.unit) && !this.queued.has(e.unit)) {
          this.queued.set(e.unit, { type: 'unit-new', unit: e.unit });
          this.scheduleDrain();
        }
      });
  }

  /**
   * Adopt every existing session: the running scopes and services are listed (one call), then each
   * is read as an event would read it (refresh(): a unit with an event meanwhile is read again,
   * one removed meanwhile is not brought back), ADOPT_IN_FLIGHT at a time, so that sbd answers
   * its watchdog and its callers while it adopts thousands. `adopting` says how far it is.
   */
  async adopt(): Promise<void> {
    this.adopting = { adopted: 0, listed: null };
    let units: string[];
    try {
      units = await this.manager.listLiveUnits();
    } catch (err) {
      this.adopting = undefined;
      throw err;
    }
    this.adopting = { adopted: 0, listed: units.length };
    let next = 0;
    const failed: string[] = [];
    const worker = async (): Promise<void> => {
      while (next < units.length) {
        const unit = units[next++] as string;
        if (!(await this.refresh(unit))) failed.push(unit);
        if (this.adopting) this.adopting.adopted++;
      }
    };
    try {
      await Promise.all(Array.from({ length: Math.min(ADOPT_IN_FLIGHT, units.length) }, worker));
      // A read that failed (a busy manager's reply timed out, say) is tried once more, one at a
      // time: a session left unread would be left unwatched until its next event.
      for (const unit of failed) await this.refresh(unit);
    } finally {
      this.adopting = undefined;
    }
  }

  /**
   * The kernel says this session is over (its PSI trigger's POLLERR, cgroup.events "populated 0",
   * its cgroup gone while sampling): drop it now, before systemd's UnitRemoved, and never adopt
   * the same invocation again. False when it was no longer a session.
   */
  ended(session: Session, why: string): boolean {
    if (this.byUnit.get(session.unit) !== session) return false;
    this.over.set(session.unit, session.invocationId);
    this.drop(session.unit, why);
    return true;
  }

  /** Every session, by unit name, in code-unit order: unit names are ASCII, and localeCompare
   * (when this also counted a slice's sessions on every sample) took about a quarter of a second
   * of sbd's start with 100 sessions under TCG. */
  list(): Session[] {
    return [...this.byUnit.values()].sort((a, b) => (a.unit < b.unit ? -1 : a.unit > b.unit ? 1 : 0));
  }

  /** Every session, in no particular order (the freeze check's timer: nothing to sort). */
  values(): IterableIterator<Session> {
    return this.byUnit.values();
  }

  /** How many sessions live in this slice (read on every detector sample: no copy, no sort). */
  countInSlice(slice: string): number {
    let n = 0;
    for (const s of this.byUnit.values()) if (s.slice === slice) n++;
    return n;
  }

  get(unitOrId: string): Session | undefined {
    return this.byUnit.get(unitOrId) ?? this.list().find((s) => s.id === unitOrId);
  }

  get size(): number {
    return this.byUnit.size;
  }

  /** An event came while the unit is looked up: `values` are its state and invocation, when it carried them. */
  private markStale(unit: string, values?: { activeState?: string; invocationId?: string }): void {
    const before = this.seenMeanwhile.get(unit);
    const complete = values?.activeState !== undefined && values.invocationId !== undefined;
    this.seenMeanwhile.set(unit, complete && before !== null ? { activeState: values.activeState as string, invocationId: values.invocationId as string } : null);
    this.stale.add(unit);
  }

  /** Read the unit and adopt, follow or drop it; false when systemd's answer was an error. */
  private async refresh(unit: string, values?: { activeState?: string; invocationId?: string }): Promise<boolean> {
    if (this.pending.has(unit)) {
      this.markStale(unit, values);
      return true; // the lookup in flight reads it again, or takes the event's values
    }
    this.pending.add(unit);
    try {
      let info: UnitInfo | undefined;
      do {
        this.stale.delete(unit);
        this.seenMeanwhile.delete(unit);
        info = await this.manager.getUnit(unit);
        // Events came meanwhile (a new scope: UnitNew, then activating, then active). When each
        // carried its state and the invocation read is theirs, no second read: within one
        // invocation a unit only moves on (STATE_ORDER), so of the read's state and the last
        // event's, the later one is the state now, whichever came first on the bus; the rest of
        // what was read holds for the invocation (cgroup, slice). Else it is read again (200 new
        // scopes were read twice each, bench:storm).
        const meanwhile = this.seenMeanwhile.get(unit);
        if (this.stale.has(unit) && meanwhile && info && info.controlGroup !== '' && info.invocationId === meanwhile.invocationId) {
          if (stateOrder(meanwhile.activeState, 'event') > stateOrder(info.activeState, 'read')) info = { ...info, activeState: meanwhile.activeState };
          this.stale.delete(unit);
        }
      } while (this.stale.has(unit)); // read before the latest event: read again
      if (info === undefined) this.drop(unit);
      else this.consider(info);
      return true;
    } catch (err) {
      this.onWarn('cannot read a unit from systemd', { unit, err });
      return false;
    } finally {
      this.pending.delete(unit);
      this.stale.delete(unit);
      this.seenMeanwhile.delete(unit);
    }
  }

  private consider(info: UnitInfo): void {
    const known = this.byUnit.get(info.unit);
    if (!this.slices.includes(info.slice) && LIVE.has(info.activeState) && info.invocationId !== '') this.elsewhere.set(info.unit, info.invocationId);
    else this.elsewhere.delete(info.unit);
    const live = this.slices.includes(info.slice) && LIVE.has(info.activeState) && info.controlGroup !== '' && this.over.get(info.unit) !== info.invocationId;
    if (!live) {
      if (known) this.drop(info.unit);
      return;
    }
    if (known && known.invocationId === info.invocationId) {
      // Same session: follow its limits (someone may have changed them).
      known.memoryHigh = info.memoryHigh;
      known.memoryMax = info.memoryMax;
      known.memorySwapMax = info.memorySwapMax;
      return;
    }
    if (known) this.drop(info.unit); // a new session behind the same name
    const session = this.newSession(info);
    this.byUnit.set(info.unit, session);
    this.emit('added', session);
  }

  private newSession(info: UnitInfo): Session {
    const dir = cgroupDir(info.controlGroup);
    const record = this.records ? readRecord(this.records, info.unit, (file, why) => this.onWarn('ignoring a bad session record', { file, why })) : undefined;
    // The record names the agent even after it exited: then its leftovers are what remains.
    const root = record ? undefined : rootProcess(readCgroupProcesses(dir));
    return {
      unit: info.unit,
      id: record?.id ?? sessionId(info.unit),
      invocationId: info.invocationId,
      controlGroup: info.controlGroup,
      cgroupDir: dir,
      slice: info.slice,
      memoryHigh: info.memoryHigh,
      memoryMax: info.memoryMax,
      memorySwapMax: info.memorySwapMax,
      agentPid: record?.agentPid ?? root?.pid,
      agentFromRecord: record !== undefined,
      agentStartTicks: record?.agentStartTicks ?? root?.startTicks,
      heartbeat: record?.heartbeat,
      reap: record?.reap ?? true,
      adoptedAtMs: Date.now(),
    };
  }

  private drop(unit: string, why = 'systemd'): void {
    const s = this.byUnit.get(unit);
    if (!s) return;
    this.byUnit.delete(unit);
    if (this.records) removeRecord(this.records, unit); // the session is over: so is its record
    this.emit('removed', s, why);
  }
}
