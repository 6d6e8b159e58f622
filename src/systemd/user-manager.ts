/**
 * The UserManager over dbus-next. Only raw messages are used: no proxy objects, since
 * dbus-next's removeMatch is broken and each proxy would leak match rules (design.md §9).
 * Three match rules are added, once: Manager signals, the Unit interface's PropertiesChanged under
 * the unit path, and the owner changes of systemd's name. A signal counts only when it comes from the unique name
 * that owns systemd's name now: any process of the user can send one on systemd's path and
 * interface, and dbus-next hands every message on the connection to its listeners.
 */
import * as dbus from 'dbus-next';
import { JobFailedError } from './job-error';
import { type NameOwner, followNameOwner } from './name-owner';
import { unitFromObjectPath, unitObjectPath } from './names';
import type { MemoryProps, TransientProperty, TransientScope, UnitEvent, UnitInfo, UserManager } from './types';
import { invocationIdFromBus, limitFromBus, limitToBus } from './values';

const SYSTEMD = 'org.freedesktop.systemd1';
const MANAGER_PATH = '/org/freedesktop/systemd1';
const MANAGER = `${SYSTEMD}.Manager`;
const PROPERTIES = 'org.freedesktop.DBus.Properties';
const UNIT_INTERFACE = `${SYSTEMD}.Unit`;
/** What getUnit reads of every unit (UNIT_INTERFACE), of those with a cgroup (their own
 * interface), and of services and timers besides. */
const UNIT_PROPS = ['LoadState', 'ActiveState', 'InvocationID'] as const;
const CGROUP_PROPS = ['ControlGroup', 'Slice', 'MemoryHigh', 'MemoryMax', 'MemorySwapMax'] as const;
/** Reads of a unit whose state moves between its Gets before the last one is taken as it is (a
 * unit restarting over and over; the event of its next move reads it again). */
const UNIT_READ_ATTEMPTS = 3;
const KIND_PROPS: Partial<Record<string, readonly string[]>> = {
  Service: ['Result', 'ExecMainCode', 'ExecMainStatus', 'MainPID', 'NRestarts', 'ExecMainStartTimestamp'],
  Timer: ['Result'],
};

/** How long a start/stop job may take before we stop waiting: systemd's own default start timeout is 90 s. */
const JOB_TIMEOUT_MS = 90_000;

type Variants = Record<string, dbus.Variant>;

/** The unit's type interface's name (Scope, Service, Slice, Timer), from its suffix; undefined for another type. */
const unitKind = (unit: string): 'Scope' | 'Service' | 'Slice' | 'Timer' | undefined =>
  unit.endsWith('.scope') ? 'Scope' : unit.endsWith('.service') ? 'Service' : unit.endsWith('.slice') ? 'Slice' : unit.endsWith('.timer') ? 'Timer' : undefined;

/** MemoryHigh, MemoryMax and MemorySwapMax as read (a property not there: infinity, as systemd's default). */
function limitsOf(p: Record<string, unknown>): Pick<UnitInfo, 'memoryHigh' | 'memoryMax' | 'memorySwapMax'> {
  const limit = (name: string): number => limitFromBus((p[name] as bigint | undefined) ?? 0xffff_ffff_ffff_ffffn);
  return { memoryHigh: limit('MemoryHigh'), memoryMax: limit('MemoryMax'), memorySwapMax: limit('MemorySwapMax') };
}

/** Open a connection to the bus at `busAddress`; rejects with the address and the reason. */
export async function connectBus(busAddress: string): Promise<dbus.MessageBus> {
  const bus = dbus.sessionBus({ busAddress });
  await new Promise<void>((resolve, reject) => {
    bus.once('connect', () => resolve());
    bus.once('error', (err: unknown) =>
      reject(new Error(`cannot connect to the user bus at ${busAddress}: ${String((err as Error)?.message ?? err)}`)),
    );
  });
  return bus;
}

export class DbusUserManager implements UserManager {
  private readonly bus: dbus.MessageBus;
  private readonly unitListeners: Array<(e: UnitEvent) => void> = [];
  private readonly lostListeners: Array<(e: Error) => void> = [];
  /** Jobs that ended before their caller asked: job path -> result. */
  private readonly finishedJobs = new Map<string, string>();
  private readonly jobWaiters = new Map<string, (result: string) => void>();
  private lost = false;
  private closed = false;
  /** Who owns systemd's name: only its signals are believed. */
  private readonly systemd: NameOwner;

  private constructor(bus: dbus.MessageBus) {
    this.bus = bus;
    // A new owner is a re-exec'd (or restarted) manager: subscribe again, as a new client would
    // (systemd keeps its subscribers across a re-exec; then it answers "already subscribed").
    this.systemd = followNameOwner(bus, SYSTEMD, (owner) => {
      if (owner !== '') this.managerCall('Subscribe', '', []).catch(() => {});
    });
    bus.on('message', (msg) => this.dispatch(msg));
    bus.on('error', (err: unknown) => this.fail(err instanceof Error ? err : new Error(String(err))));
  }

  /** Connect to the user bus at `busAddress`, add the match rules and Subscribe(). */
  static async connect(busAddress: string): Promise<DbusUserManager> {
    return DbusUserManager.attach(await connectBus(busAddress));
  }

  /** The same, on a bus connection that is shared (sbd also exports its own interface on it). */
  static async attach(bus: dbus.MessageBus): Promise<DbusUserManager> {
    const m = new DbusUserManager(bus);
    await m.systemd.start();
    await m.addMatch(`type='signal',sender='${SYSTEMD}',interface='${MANAGER}'`);
    // Only the Unit interface's: systemd sends a unit's change as two signals, its type's interface
    // first (a scope's cgroup settings, the larger), then the Unit interface's (dbus-unit.c
    // send_changed_signal), so the second says as much that something changed, decoded at less cost.
    await m.addMatch(`type='signal',sender='${SYSTEMD}',interface='${PROPERTIES}',member='PropertiesChanged',path_namespace='${MANAGER_PATH}/unit',arg0='${UNIT_INTERFACE}'`);
    await m.managerCall('Subscribe', '', []);
    return m;
  }

  private fail(err: Error): void {
    if (this.lost) return;
    this.lost = true;
    for (const l of this.lostListeners) l(err);
  }

  private async addMatch(rule: string): Promise<void> {
    await this.bus.call(
      new dbus.Message({
        destination: 'org.freedesktop.DBus',
        path: '/org/freedesktop/DBus',
        interface: 'org.freedesktop.DBus',
        member: 'AddMatch',
        signature: 's',
        body: [rule],
      }),
    );
  }

  private async call(path: string, iface: string, member: string, signature: string, body: unknown[]): Promise<unknown[]> {
    const reply = await this.bus.call(new dbus.Message({ destination: SYSTEMD, path, interface: iface, member, signature, body }));
    return (reply?.body ?? []) as unknown[];
  }

  private managerCall(member: string, signature: string, body: unknown[]): Promise<unknown[]> {
    return this.call(MANAGER_PATH, MANAGER, member, signature, body);
  }

  private dispatch(msg: dbus.Message): void {
    if (msg.type !== dbus.MessageType.SIGNAL || !this.systemd.sent(msg)) return;
    if (msg.interface === MANAGER) {
      if (msg.member === 'JobRemoved') {
        const [, job, , result] = msg.body as [number, string, string, string];
        const waiter = this.jobWaiters.get(job);
        if (waiter) {
          this.jobWaiters.delete(job);
          waiter(result);
        } else {
          this.finishedJobs.set(job, result);
          if (this.finishedJobs.size > 256) this.finishedJobs.delete(this.finishedJobs.keys().next().value as string);
        }
      } else if (msg.member === 'UnitNew' || msg.member === 'UnitRemoved') {
        const [unit] = msg.body as [string, string];
        this.emit({ type: msg.member === 'UnitNew' ? 'unit-new' : 'unit-removed', unit });
      }
    } else if (msg.interface === PROPERTIES && msg.member === 'PropertiesChanged' && msg.path && (msg.body as unknown[])[0] === UNIT_INTERFACE) {
      // (the Unit interface's only, as the match rule asks: the type interface's came just before it)
      const unit = unitFromObjectPath(msg.path);
      const [, changed, invalidated] = msg.body as [string, Variants, string[]];
      if (!unit) return;
      const activeState = changed.ActiveState?.value as string | undefined;
      const invocation = changed.InvocationID?.value as Buffer | undefined;
      this.emit({
        type: 'unit-changed', unit, changed: [...Object.keys(changed), ...invalidated],
        ...(typeof activeState === 'string' ? { activeState } : {}),
        ...(invocation !== undefined ? { invocationId: invocationIdFromBus(invocation) } : {}),
      });
    }
  }

  private emit(e: UnitEvent): void {
    for (const l of this.unitListeners) l(e);
  }

  private waitJob(job: string): Promise<string> {
    const done = this.finishedJobs.get(job);
    if (done !== undefined) {
      this.finishedJobs.delete(job);
      return Promise.resolve(done);
    }
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.jobWaiters.delete(job);
        reject(new Error(`systemd job ${job} did not finish within ${JOB_TIMEOUT_MS / 1000} s`));
      }, JOB_TIMEOUT_MS);
      this.jobWaiters.set(job, (result) => {
        clearTimeout(timer);
        resolve(result);
      });
    });
  }

  private async runJob(what: string, unit: string, member: string, signature: string, body: unknown[]): Promise<void> {
    const [job] = (await this.managerCall(member, signature, body)) as [string];
    const result = await this.waitJob(job);
    if (result !== 'done') throw new JobFailedError(what, unit, result);
  }

  async listSliceUnits(slices: readonly string[]): Promise<UnitInfo[]> {
    const [rows] = (await this.managerCall('ListUnitsByPatterns', 'asas', [[], ['*.scope', '*.service']])) as [Array<[string]>];
    const infos = await Promise.all(rows.map(([name]) => this.getUnit(name)));
    return infos.filter((u): u is UnitInfo => u !== undefined && slices.includes(u.slice));
  }

  async listLiveUnits(): Promise<string[]> {
    const [rows] = (await this.managerCall('ListUnitsByPatterns', 'asas', [['active', 'activating', 'reloading'], ['*.scope', '*.service']])) as [Array<[string]>];
    return rows.map(([name]) => name);
  }

  /** The values of `names` on interface `iface` of the object at `path`: one Get each, in
   * parallel; a property this systemd does not have is undefined, as GetAll would leave it. */
  private async getProps(path: string, iface: string, names: readonly string[]): Promise<Record<string, unknown>> {
    const replies = await Promise.all(
      names.map((name) =>
        this.call(path, PROPERTIES, 'Get', 'ss', [iface, name]).catch((err: unknown) => {
          if (err instanceof dbus.DBusError && /UnknownProperty/.test(err.type)) return [];
          throw err;
        }),
      ),
    );
    return Object.fromEntries(names.map((name, i) => [name, (replies[i]?.[0] as dbus.Variant | undefined)?.value]));
  }

  /**
   * A unit's state, read as the properties used, one Get each, not GetAll(''): in the lab guest
   * dbus-next spent 14.4 ms of CPU decoding a scope's every property, 5.6 ms on these eight
   * (bench:unit-read), and every unit event reads its unit again (200 sessions created at once
   * held sbd's event loop 13 s). First the Unit interface's three (a unit not found ends there);
   * then its own interface's, with ActiveState and InvocationID asked again: the Gets are
   * answered one by one, so a read that a restart came between (those two moved) is read again.
   * Before them, the Manager's GetUnit says whether systemd has the unit loaded at all: a Get on
   * the path of a unit not loaded makes systemd load it (a "not-found" stub), which it announces
   * with UnitNew and unloads again (UnitRemoved), and the registry reads a unit on UnitNew. Once
   * a session ended, that loop of Get, UnitNew, Get ran without end: three ended sessions held
   * sbd at 65 % of a CPU (bench:storm's profile, then busctl monitor in the guest).
   */
  async getUnit(unit: string): Promise<UnitInfo | undefined> {
    const kind = unitKind(unit);
    if (kind === undefined) return undefined;
    const path = unitObjectPath(unit);
    const ownProps = [...(kind === 'Timer' ? [] : CGROUP_PROPS), ...(KIND_PROPS[kind] ?? [])];
    try {
      // NoSuchUnit when not loaded, and nothing loaded. (A unit unloaded between this answer and the
      // Gets is loaded by them once more, as a stub: its UnitNew brings a read that stops here.)
      await this.managerCall('GetUnit', 's', [unit]);
      let common: Record<string, unknown>;
      let own: Record<string, unknown>;
      for (let attempt = 1; ; attempt++) {
        common = await this.getProps(path, UNIT_INTERFACE, UNIT_PROPS);
        if (common.LoadState === 'not-found') return undefined;
        const [again, mine] = await Promise.all([this.getProps(path, UNIT_INTERFACE, ['ActiveState', 'InvocationID']), this.getProps(path, `${SYSTEMD}.${kind}`, ownProps)]);
        own = mine;
        const same = again.ActiveState === common.ActiveState && Buffer.compare((again.InvocationID as Buffer | undefined) ?? Buffer.alloc(0), (common.InvocationID as Buffer | undefined) ?? Buffer.alloc(0)) === 0;
        if (same || attempt >= UNIT_READ_ATTEMPTS) {
          common = { ...common, ...again }; // the later state, on a last attempt that still moved
          break;
        }
      }
      const props = { ...common, ...own };
      const v = <T>(name: string): T | undefined => props[name] as T | undefined;
      if (v<string>('LoadState') === 'not-found') return undefined;
      return {
        unit,
        invocationId: invocationIdFromBus(v<Buffer>('InvocationID') ?? Buffer.alloc(0)),
        controlGroup: v<string>('ControlGroup') ?? '',
        slice: v<string>('Slice') ?? '',
        activeState: v<string>('ActiveState') ?? 'unknown',
        ...limitsOf(props),
        ...(kind === 'Service' ? { result: v<string>('Result'), execMainCode: v<number>('ExecMainCode'), execMainStatus: v<number>('ExecMainStatus'), mainPid: v<number>('MainPID'), nRestarts: v<number>('NRestarts') } : {}),
        ...(kind === 'Timer' ? { result: v<string>('Result') } : {}),
        ...(kind === 'Service' && (v<bigint>('ExecMainStartTimestamp') ?? 0n) > 0n ? { mainStartedAtMs: Number(v<bigint>('ExecMainStartTimestamp')) / 1000 } : {}),
      };
    } catch (err) {
      if (err instanceof dbus.DBusError && /UnknownObject|NoSuchUnit|UnknownInterface/.test(err.type)) return undefined;
      throw err;
    }
  }

  async getUnitLimits(unit: string): Promise<Pick<UnitInfo, 'memoryHigh' | 'memoryMax' | 'memorySwapMax'> | undefined> {
    const kind = unitKind(unit);
    if (kind !== 'Scope' && kind !== 'Service') return undefined;
    try {
      return limitsOf(await this.getProps(unitObjectPath(unit), `${SYSTEMD}.${kind}`, ['MemoryHigh', 'MemoryMax', 'MemorySwapMax']));
    } catch (err) {
      if (err instanceof dbus.DBusError && /UnknownObject|NoSuchUnit|UnknownInterface/.test(err.type)) return undefined;
      throw err;
    }
  }

  async managerCgroup(): Promise<string> {
    const [v] = (await this.call(MANAGER_PATH, PROPERTIES, 'Get', 'ss', [MANAGER, 'ControlGroup'])) as [dbus.Variant<string>];
    return v.value;
  }

  /** A scope's OOMPolicy as this manager reports it (its own init.scope's), or undefined when
   * scopes have no such property here. */
  async scopeOomPolicy(): Promise<string | undefined> {
    try {
      const [v] = (await this.call('/org/freedesktop/systemd1/unit/init_2escope', PROPERTIES, 'Get', 'ss', ['org.freedesktop.systemd1.Scope', 'OOMPolicy'])) as [dbus.Variant<string>];
      return v.value;
    } catch {
      return undefined;
    }
  }

  async managerVersion(): Promise<string> {
    const [v] = (await this.call(MANAGER_PATH, PROPERTIES, 'Get', 'ss', [MANAGER, 'Version'])) as [dbus.Variant<string>];
    return v.value;
  }

  async setMemory(unit: string, props: MemoryProps): Promise<void> {
    await this.managerCall('SetUnitProperties', 'sba(sv)', [unit, true, memoryVariants(props)]);
  }

  async startScope(s: TransientScope): Promise<void> {
    const props: Array<[string, dbus.Variant]> = [
      ['PIDs', new dbus.Variant('au', s.pids)],
      ['Slice', new dbus.Variant('s', s.slice)],
      ...memoryVariants(s),
    ];
    if (s.description !== undefined) props.push(['Description', new dbus.Variant('s', s.description)]);
    if (s.oomPolicy !== undefined) props.push(['OOMPolicy', new dbus.Variant('s', s.oomPolicy)]);
    await this.runJob('starting', s.name, 'StartTransientUnit', 'ssa(sv)a(sa(sv))', [s.name, 'fail', props, []]);
  }

  async startTransientService(name: string, props: readonly TransientProperty[]): Promise<void> {
    await this.runJob('starting', name, 'StartTransientUnit', 'ssa(sv)a(sa(sv))', [name, 'fail', variantsOf(props), []]);
  }

  async startTransientTimer(timer: string, timerProps: readonly TransientProperty[], service: string, serviceProps: readonly TransientProperty[]): Promise<void> {
    // the 4th argument, a(sa(sv)): auxiliary units, created (not started) in the same call
    await this.runJob('starting', timer, 'StartTransientUnit', 'ssa(sv)a(sa(sv))', [timer, 'fail', variantsOf(timerProps), [[service, variantsOf(serviceProps)]]]);
  }

  async reload(): Promise<void> {
    await this.managerCall('Reload', '', []);
  }

  async enableUnitFiles(paths: readonly string[]): Promise<void> {
    await this.managerCall('EnableUnitFiles', 'asbb', [[...paths], false, true]);
  }

  async disableUnitFiles(names: readonly string[]): Promise<void> {
    await this.managerCall('DisableUnitFiles', 'asb', [[...names], false]);
  }

  startUnit(unit: string): Promise<void> {
    return this.runJob('starting', unit, 'StartUnit', 'ss', [unit, 'replace']);
  }

  stopUnit(unit: string): Promise<void> {
    return this.runJob('stopping', unit, 'StopUnit', 'ss', [unit, 'replace']);
  }

  async resetFailedUnit(unit: string): Promise<void> {
    await this.managerCall('ResetFailedUnit', 's', [unit]);
  }

  restartUnit(unit: string): Promise<void> {
    return this.runJob('restarting', unit, 'RestartUnit', 'ss', [unit, 'replace']);
  }

  onUnitEvent(listener: (event: UnitEvent) => void): void {
    this.unitListeners.push(listener);
  }

  onLost(listener: (err: Error) => void): void {
    this.lostListeners.push(listener);
  }

  /** Disconnect; calling it again does nothing. */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.lost = true;
    this.bus.disconnect();
  }
}

function variantsOf(props: readonly TransientProperty[]): Array<[string, dbus.Variant]> {
  return props.map(([n, sig, value]) => [n, new dbus.Variant(sig, value)] as [string, dbus.Variant]);
}

function memoryVariants(p: MemoryProps): Array<[string, dbus.Variant]> {
  const out: Array<[string, dbus.Variant]> = [];
  if (p.memoryHigh !== undefined) out.push(['MemoryHigh', new dbus.Variant('t', limitToBus(p.memoryHigh))]);
  if (p.memoryMax !== undefined) out.push(['MemoryMax', new dbus.Variant('t', limitToBus(p.memoryMax))]);
  if (p.memorySwapMax !== undefined) out.push(['MemorySwapMax', new dbus.Variant('t', limitToBus(p.memorySwapMax))]);
  return out;
}
