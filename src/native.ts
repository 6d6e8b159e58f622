/**
 * The typed face of the C++ addon (native/). Only mechanism lives there: pidfds, inotify,
 * PSI triggers, the sd_notify datagram and the journal's native protocol, each fd watched on
 * Node's own event loop.
 * Every policy (what to watch, when to signal) lives in the callers.
 */
import * as fs from 'node:fs';
import { constants } from 'node:os';
import * as path from 'node:path';

/** An Error from a failing syscall: `code` is the errno name, as in Node's own errors. */
export interface NativeError extends Error {
  code: string;
  errno: number;
  syscall: string;
  path?: string;
}

interface RawPidfd {
  readonly fd: number;
  readonly pid: number;
  signal(signo: number): void;
  watchExit(cb: () => void): void;
  hasExited(): boolean;
  mrelease(): void;
  close(): void;
  ref(): void;
  unref(): void;
}
interface RawFileWatch {
  readonly size: number;
  add(path: string, attributes: boolean, entries: boolean): void;
  remove(path: string): boolean;
  close(): void;
  ref(): void;
  unref(): void;
}
interface RawPsiTrigger {
  readonly fd: number;
  close(): void;
  ref(): void;
  unref(): void;
}
interface Addon {
  abiVersion: number;
  Pidfd: new (pid: number) => RawPidfd;
  FileWatch: new (cb: (events: Array<[string, 'modified' | 'gone']>) => void) => RawFileWatch;
  PsiTrigger: new (path: string, spec: string, cb: (kind: 'fired' | 'gone') => void) => RawPsiTrigger;
  sdNotify(socketPath: string, payload: string): boolean;
  journalSend(socketPath: string, entry: Buffer): JournalRoute;
}

/** The project's root: dist/native.js sits one level below it. */
const projectRoot = path.resolve(__dirname, '..');

/**
 * Where the addon is loaded from. Both builds put it in build/Release/: cmake-js (a checkout's
 * `npm ci`, CMakeLists.txt) and node-gyp (`npm install -g` of the packed tarball, binding.gyp;
 * scripts/install-native.js chooses). SESSIONBRAKE_ADDON overrides it (the tests' other builds).
 */
export const addonPath = process.env.SESSIONBRAKE_ADDON ?? path.join(projectRoot, 'build', 'Release', 'sessionbrake.node');

/** The exec gate of `sbctl run` (native/gate/exec_gate.cc), built beside the addon. */
export const execGatePath = path.join(path.dirname(addonPath), 'sb-exec-gate');

export type AddonBuild = 'cmake-js' | 'node-gyp' | 'unknown';

/** Which build made the addon, from what each leaves in its build directory (build/, above Release/). */
export function addonBuiltBy(file: string = addonPath): AddonBuild {
  const buildDir = path.dirname(path.dirname(file));
  if (fs.existsSync(path.join(buildDir, 'CMakeCache.txt'))) return 'cmake-js';
  if (fs.existsSync(path.join(buildDir, 'config.gypi'))) return 'node-gyp';
  return 'unknown';
}

/** The command that builds the addon anew for this copy: a checkout's npm script, or npm's rebuild of an installed package. */
function rebuildHint(): string {
  return path.basename(path.dirname(projectRoot)) === 'node_modules'
    ? `Build it again with \`npm rebuild -g sessionbrake\` (it needs a C++ compiler, make, python3 and Node's headers)`
    : `Rebuild it with \`npm run build:native\` in ${projectRoot}`;
}

function loadAddon(): Addon {
  try {
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    return require(addonPath) as Addon;
  } catch (err) {
    const reason = err instanceof Error ? err.message.split('\n')[0] : String(err);
    throw new Error(`sessionbrake: cannot load the native addon ${addonPath} (${reason}). ${rebuildHint()}.`);
  }
}

const addon = loadAddon();

/** Signal numbers by name ("SIGTERM" -> 15). */
function signo(sig: NodeJS.Signals | number): number {
  if (typeof sig === 'number') return sig;
  const n = constants.signals[sig];
  if (n === undefined) throw new TypeError(`unknown signal ${String(sig)}`);
  return n;
}

/**
 * A handle on one process that can never reach a later process with the same pid number.
 * `exited` resolves once the process has exited (it need not be our child).
 */
export class Pidfd {
  readonly pid: number;
  private readonly raw: RawPidfd;
  private exit: Promise<void> | undefined;

  private constructor(raw: RawPidfd) {
    this.raw = raw;
    this.pid = raw.pid;
  }

  /** pidfd_open(pid). Throws a NativeError (ESRCH when no such process). */
  static open(pid: number): Pidfd {
    return new Pidfd(new addon.Pidfd(pid));
  }

  /** The pidfd itself, or -1 once closed. */
  get fd(): number {
    return this.raw.fd;
  }

  /** pidfd_send_signal. Throws ESRCH once the process has exited. */
  signal(sig: NodeJS.Signals | number): void {
    this.raw.signal(signo(sig));
  }

  /** Resolves once the process exits. Keeps the event loop alive until then. */
  get exited(): Promise<void> {
    this.exit ??= new Promise<void>((resolve) => this.raw.watchExit(resolve));
    return this.exit;
  }

  /** True when the process has already exited (a poll with no wait). */
  hasExited(): boolean {
    return this.raw.hasExited();
  }

  /** process_mrelease: free a SIGKILLed process's memory now. Throws ENOSYS/EINVAL. */
  mrelease(): void {
    this.raw.mrelease();
  }

  /** Stop waiting on the exit without keeping the event loop alive. */
  unref(): void {
    this.raw.unref();
  }

  /** Release the fd. A pending `exited` never settles after this. */
  close(): void {
    this.raw.close();
  }
}

export type FileEvent = { path: string; kind: 'modified' | 'gone' };

/**
 * Many files watched through one inotify fd. `onEvent` runs at most once per file per
 * event-loop turn, however often the file changed; `gone` comes once, when the file (or
 * its cgroup) was removed, and the watch is released with it.
 */
export class FileWatch {
  private readonly raw: RawFileWatch;

  constructor(onEvent: (event: FileEvent) => void) {
    this.raw = new addon.FileWatch((events) => {
      for (const [p, kind] of events) onEvent({ path: p, kind });
    });
  }

  /** Number of files watched. */
  get size(): number {
    return this.raw.size;
  }

  /**
   * Start watching a file. Throws a NativeError naming the path (ENOENT, EACCES, ENOSPC).
   * `attributes`: a change of its times or mode (`touch`) is `modified` too; for the files
   * renewed that way (a heartbeat), not for cgroup files. `entries`: `file` is a directory
   * whose entries are told by their own paths, `modified` when one comes (created or moved in),
   * `gone` when one goes (deleted or moved out): a file that does not exist yet is seen when it
   * comes. The directory itself is `gone` when it goes.
   */
  add(file: string, options: { attributes?: boolean; entries?: boolean } = {}): void {
    this.raw.add(file, options.attributes ?? false, options.entries ?? false);
  }

  /** Stop watching a file; false when it was not watched. */
  remove(file: string): boolean {
    return this.raw.remove(file);
  }

  /** Let the process exit even while files are watched. */
  unref(): void {
    this.raw.unref();
  }

  close(): void {
    this.raw.close();
  }
}

export type PsiKind = 'some' | 'full';
export interface PsiTriggerSpec {
  /** `some`: at least one task stalled; `full`: all non-idle tasks stalled at once. */
  kind: PsiKind;
  /** Stall time within one window that fires the trigger, in µs. */
  stallUs: number;
  /** The window, in µs. */
  windowUs: number;
}

/** The kernel's window limits for PSI triggers (psi.rst): 500 ms to 10 s. */
export const PSI_MIN_WINDOW_US = 500_000;
export const PSI_MAX_WINDOW_US = 10_000_000;
/** An unprivileged user may only use windows that are a multiple of 2 s (kernel ≥ 6.1 rule). */
export const PSI_UNPRIVILEGED_WINDOW_STEP_US = 2_000_000;

/**
 * The kernel refused a trigger window that is not a multiple of 2 s for a caller without
 * CAP_SYS_RESOURCE. Act on it: widen the window to `suggestedWindowUs`, or fall back to sampling.
 */
export class PsiWindowError extends Error implements NativeError {
  readonly code = 'EINVAL';
  readonly errno = 22;
  readonly syscall = 'write';
  readonly path: string;
  readonly windowUs: number;
  readonly suggestedWindowUs: number;

  constructor(file: string, windowUs: number) {
    const suggested = Math.ceil(windowUs / PSI_UNPRIVILEGED_WINDOW_STEP_US) * PSI_UNPRIVILEGED_WINDOW_STEP_US;
    super(
      `write ${file}: the kernel refused a PSI trigger window of ${windowUs} µs to a caller ` +
        `without CAP_SYS_RESOURCE (EINVAL): use a multiple of 2 s, such as ${suggested} µs, or fall back to sampling`,
    );
    this.name = 'PsiWindowError';
    this.path = file;
    this.windowUs = windowUs;
    this.suggestedWindowUs = Math.min(suggested, PSI_MAX_WINDOW_US);
  }
}

function checkSpec(file: string, spec: PsiTriggerSpec): string {
  const where = `PSI trigger on ${file}`;
  if (spec.kind !== 'some' && spec.kind !== 'full') {
    throw new RangeError(`${where}: kind must be "some" or "full", got ${JSON.stringify(spec.kind)}`);
  }
  for (const key of ['stallUs', 'windowUs'] as const) {
    if (!Number.isInteger(spec[key]) || spec[key] <= 0) {
      throw new RangeError(`${where}: ${key} must be a positive integer of µs, got ${String(spec[key])}`);
    }
  }
  if (spec.windowUs < PSI_MIN_WINDOW_US || spec.windowUs > PSI_MAX_WINDOW_US) {
    throw new RangeError(
      `${where}: windowUs must be from ${PSI_MIN_WINDOW_US} to ${PSI_MAX_WINDOW_US} µs, got ${spec.windowUs}`,
    );
  }
  if (spec.stallUs > spec.windowUs) {
    throw new RangeError(`${where}: stallUs (${spec.stallUs}) must not exceed windowUs (${spec.windowUs})`);
  }
  return `${spec.kind} ${spec.stallUs} ${spec.windowUs}`;
}

function isNativeError(err: unknown): err is NativeError {
  return err instanceof Error && typeof (err as Partial<NativeError>).code === 'string';
}

/** A PSI trigger armed on a pressure file: `onEvent('fired')` at most once per window. */
export class PsiTrigger {
  private readonly raw: RawPsiTrigger;

  private constructor(raw: RawPsiTrigger) {
    this.raw = raw;
  }

  /**
   * Arm a trigger on `/proc/pressure/memory` or a cgroup's `memory.pressure`.
   * `onEvent('gone')` comes once when the cgroup is removed; the trigger is then spent.
   * Throws RangeError for a spec the kernel would refuse, PsiWindowError for an unprivileged
   * window that is not a multiple of 2 s, a NativeError otherwise (ENOENT: no PSI here).
   */
  static arm(file: string, spec: PsiTriggerSpec, onEvent: (kind: 'fired' | 'gone') => void): PsiTrigger {
    const line = checkSpec(file, spec);
    try {
      return new PsiTrigger(new addon.PsiTrigger(file, line, onEvent));
    } catch (err) {
      if (isNativeError(err) && err.code === 'EINVAL' && spec.windowUs % PSI_UNPRIVILEGED_WINDOW_STEP_US !== 0) {
        throw new PsiWindowError(file, spec.windowUs);
      }
      throw err;
    }
  }

  get fd(): number {
    return this.raw.fd;
  }

  unref(): void {
    this.raw.unref();
  }

  /** Close the fd, which destroys the kernel's trigger. */
  close(): void {
    this.raw.close();
  }
}

/**
 * Send `payload` (KEY=VALUE lines) to systemd's notification socket. False when no socket is
 * set (not started by systemd as Type=notify); throws a NativeError when sending fails.
 */
export function sdNotify(payload: string, socketPath: string | undefined = process.env.NOTIFY_SOCKET): boolean {
  if (socketPath === undefined || socketPath === '') return false;
  return addon.sdNotify(socketPath, payload);
}

/** journald's socket for its native protocol (systemd.io/JOURNAL_NATIVE_PROTOCOL). */
export const JOURNAL_SOCKET = '/run/systemd/journal/socket';

/** How an entry reached the journal: one datagram, or a sealed memfd when it was too big for one. */
export type JournalRoute = 'datagram' | 'memfd';

/**
 * Send one journal entry, already encoded (src/journal/encode.ts), to the journal's socket
 * ("@name": an abstract socket). Never blocks: a journal that does not keep up fails with EAGAIN.
 * Throws a NativeError naming the syscall (socket, sendmsg, memfd_create, write, fcntl).
 */
export function journalSend(entry: Buffer, socketPath: string = JOURNAL_SOCKET): JournalRoute {
  return addon.journalSend(socketPath, entry);
}
