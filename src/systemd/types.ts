/** What the service needs of systemd's user manager: one small interface, for fakes and for the real one. */

/** One unit (a session's scope or service, or a slice) as the manager describes it. */
export interface UnitInfo {
  unit: string;
  /** 32 hex digits; changes each time the unit is started anew under the same name. */
  invocationId: string;
  /** The cgroup path below /sys/fs/cgroup ("/user.slice/.../sessions.slice/a.scope"); "" when none. */
  controlGroup: string;
  slice: string;
  activeState: string;
  /** Bytes; Infinity when unlimited. */
  memoryHigh: number;
  memoryMax: number;
  memorySwapMax: number;
  /** A service's Result ("success", "exit-code", "signal", "start-limit-hit", ...) or a timer's ("success", "resources"); undefined for others. */
  result?: string | undefined;
  /** A service's exit receipt: ExecMainCode (CLD_EXITED 1, CLD_KILLED 2, CLD_DUMPED 3) and ExecMainStatus (exit status or signal). */
  execMainCode?: number | undefined;
  execMainStatus?: number | undefined;
  /** A service's MainPID (0 when none). */
  mainPid?: number | undefined;
  /** A service's NRestarts: automatic restarts since it was started. */
  nRestarts?: number | undefined;
  /** A service's ExecMainStartTimestamp: when its main process last started (wall clock, ms); undefined when never. */
  mainStartedAtMs?: number | undefined;
}

/** A property of a transient unit as StartTransientUnit takes it: name, D-Bus signature, value. */
export type TransientProperty = [name: string, signature: string, value: unknown];

/** Memory properties that may be changed on a running unit. */
export interface MemoryProps {
  memoryHigh?: number;
  memoryMax?: number;
  memorySwapMax?: number;
}

export interface TransientScope extends MemoryProps {
  name: string;
  slice: string;
  pids: number[];
  description?: string;
  /** What systemd does after a kernel OOM kill in the scope (upstream 253 for scopes; Debian 12's 252 accepts it too). */
  oomPolicy?: 'continue' | 'stop' | 'kill';
}

export type UnitEvent =
  | { type: 'unit-new'; unit: string }
  | { type: 'unit-removed'; unit: string }
  /** The Unit interface's PropertiesChanged; with the values of ActiveState and InvocationID
   * (32 hex digits) when it carried them (systemd 252 and 257 emit both with their values). */
  | { type: 'unit-changed'; unit: string; changed: string[]; activeState?: string; invocationId?: string };

export interface UserManager {
  /** The active units of these slices (direct children), with their properties. */
  listSliceUnits(slices: readonly string[]): Promise<UnitInfo[]>;
  /** The scopes and services that are active, activating or reloading (any slice): their names. */
  listLiveUnits(): Promise<string[]>;
  /** One unit's properties; undefined when systemd does not know it. */
  getUnit(unit: string): Promise<UnitInfo | undefined>;
  /** A scope's or service's memory limits only (three Gets, not getUnit's ten); undefined when
   * systemd does not know it. */
  getUnitLimits?(unit: string): Promise<Pick<UnitInfo, 'memoryHigh' | 'memoryMax' | 'memorySwapMax'> | undefined>;
  /** The user manager's Version property, e.g. "252.39-1~deb12u2". */
  managerVersion(): Promise<string>;
  /** A scope's OOMPolicy (init.scope's), or undefined when this systemd's scopes have none. */
  scopeOomPolicy(): Promise<string | undefined>;
  /** The user manager's own cgroup (its ControlGroup property), e.g. "/user.slice/user-1000.slice/user@1000.service". */
  managerCgroup(): Promise<string>;
  /** SetUnitProperties(runtime=true): the change lasts until the unit stops or the manager reloads. */
  setMemory(unit: string, props: MemoryProps): Promise<void>;
  /** StartTransientUnit for a scope around `pids`; resolves when its start job is done. */
  startScope(scope: TransientScope): Promise<void>;
  /** StartTransientUnit for a service with these properties (monitor/unit.ts); resolves when its start job is done. */
  startTransientService(name: string, props: readonly TransientProperty[]): Promise<void>;
  /** One StartTransientUnit: the timer with these properties started, and its service (same name, .service)
   * created beside it as the auxiliary unit, as systemd-run --on-active does; resolves when the timer's start job is done. */
  startTransientTimer(timer: string, timerProps: readonly TransientProperty[], service: string, serviceProps: readonly TransientProperty[]): Promise<void>;
  reload(): Promise<void>;
  enableUnitFiles(paths: readonly string[]): Promise<void>;
  disableUnitFiles(names: readonly string[]): Promise<void>;
  startUnit(unit: string): Promise<void>;
  stopUnit(unit: string): Promise<void>;
  /** ResetFailedUnit: clears a failed unit's state and start-limit count (a transient one is then unloaded). */
  resetFailedUnit(unit: string): Promise<void>;
  restartUnit(unit: string): Promise<void>;
  /** UnitNew, UnitRemoved and PropertiesChanged of units, as they come. */
  onUnitEvent(listener: (event: UnitEvent) => void): void;
  /** Called once if the bus connection is lost (the service exits; systemd restarts it). */
  onLost(listener: (err: Error) => void): void;
  close(): void;
}
