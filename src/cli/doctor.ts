/**
 * `sbctl doctor`: what sbd needs from this machine, one line per check, OK or FAIL with the fix.
 * Exit 1 on any FAIL.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { cgroupDir } from '../cgroup/read';
import { ConfigError, defaultConfigPath, loadConfig } from '../config/load';
import { PsiTrigger } from '../native';
import { userBusAddress } from '../systemd/address';
import { describeOomPolicy } from '../systemd/features';
import { DbusUserManager } from '../systemd/user-manager';
import { onPath } from '../util/on-path';
import { xdgHome } from '../util/xdg';
import { dirOnPath, loginStartupFile, shellPath } from '../install/path-advice';
import { SERVICE_UNIT, SLICE_UNIT, userUnitDir } from './install';

export interface Check {
  name: string;
  ok: boolean;
  detail: string;
  /** What to do about a FAIL. */
  fix?: string;
}

export async function runChecks(env: NodeJS.ProcessEnv, configFile: string | undefined): Promise<Check[]> {
  const checks: Check[] = [];
  const uid = process.getuid?.() ?? -1;
  const mounts = fs.readFileSync('/proc/self/mounts', 'utf8');
  const v2 = /^cgroup2 \/sys\/fs\/cgroup cgroup2 /m.test(mounts);
  checks.push({ name: 'cgroup v2', ok: v2, detail: v2 ? 'cgroup2 mounted at /sys/fs/cgroup' : 'no cgroup2 at /sys/fs/cgroup', fix: 'boot with systemd.unified_cgroup_hierarchy=1 (the default since systemd 247)' });

  let manager: DbusUserManager | undefined;
  try {
    manager = await DbusUserManager.connect(userBusAddress(env));
    checks.push({ name: 'user bus', ok: true, detail: `systemd --user reachable at ${userBusAddress(env)}` });
  } catch (err) {
    checks.push({ name: 'user bus', ok: false, detail: (err as Error).message, fix: 'log in, or enable lingering (loginctl enable-linger), so that your user manager and bus run' });
  }

  // The user manager's cgroup, as systemd itself says (sbctl may run outside it, e.g. over ssh).
  const mgr = v2 && manager ? cgroupDir(await manager.managerCgroup()) : undefined;
  const controllers = mgr && fs.existsSync(path.join(mgr, 'cgroup.subtree_control')) ? fs.readFileSync(path.join(mgr, 'cgroup.subtree_control'), 'utf8').trim() : '';
  checks.push({
    name: 'memory delegated',
    ok: controllers.split(' ').includes('memory'),
    detail: mgr ? `${mgr}: subtree_control "${controllers}"` : `user@${uid}.service's cgroup unknown (no cgroup v2 or no user bus)`,
    fix: 'add Delegate=memory to user@.service (systemctl edit user@.service; Debian 12 delegates it by default)',
  });
  if (mgr) {
    const weightOf = (dir: string): string | undefined => readOr(path.join(mgr, dir, 'cpu.weight'), undefined);
    const sbdGroup = sbdGroupName((name) => fs.existsSync(path.join(mgr, name, 'cgroup.procs')));
    checks.push(cpuCheck(readOr(path.join(mgr, 'cgroup.controllers'), ''), weightOf(SLICE_UNIT), mgr, { [sbdGroup]: weightOf(sbdGroup), [MANAGER_SCOPE]: weightOf(MANAGER_SCOPE) }));
  }

  const psi = fs.existsSync('/proc/pressure/memory');
  checks.push(psiCheck(psi, readCmdline()));
  if (psi && mgr) {
    // A cgroup below the manager's own: systemd hands the user the delegated root's directory
    // but not its memory.pressure; init.scope (where systemd --user runs) is wholly the user's.
    const file = path.join(mgr, 'init.scope', 'memory.pressure');
    try {
      PsiTrigger.arm(file, { kind: 'full', stallUs: 200_000, windowUs: 2_000_000 }, () => {}).close();
      checks.push({ name: 'PSI triggers', ok: true, detail: `unprivileged 2 s trigger armed on ${file}` });
    } catch (err) {
      checks.push({ name: 'PSI triggers', ok: false, detail: `${(err as Error).message}`, fix: 'sbd falls back to sampling every 5 s; a kernel ≥ 6.1 allows unprivileged 2 s triggers' });
    }
  }

  const user = os.userInfo().username;
  const linger = fs.existsSync(`/var/lib/systemd/linger/${user}`);
  checks.push({ name: 'linger', ok: linger, detail: linger ? `enabled for ${user}` : `not enabled for ${user}: sessions stop at logout`, fix: `loginctl enable-linger ${user}` });

  if (manager) {
    // Not a failure either way: what follows a kernel OOM kill in a session, on this systemd.
    checks.push({ name: 'OOMPolicy', ok: true, detail: describeOomPolicy(await manager.managerVersion(), await manager.scopeOomPolicy()) });
    const unit = await manager.getUnit(SERVICE_UNIT);
    const active = unit?.activeState === 'active';
    const file = path.join(userUnitDir(env), SERVICE_UNIT);
    checks.push(sbdUnitCheck(unit?.activeState, fs.existsSync(file) ? file : undefined));
    if (active && unit?.mainPid) checks.push(...sbdResourceChecks(readSbdResources(unit.mainPid)));
    manager.close();
  }

  const home = os.homedir();
  checks.push(pathCheck({ sbctl: onPath('sbctl', env.PATH), sbd: onPath('sbd', env.PATH) }, env.PATH ?? '', xdgHome('bin', env), home, loginStartupFile(env.SHELL, (name) => fs.existsSync(path.join(home, name)))));

  const file = configFile ?? defaultConfigPath(env);
  try {
    loadConfig(file, configFile !== undefined);
    checks.push({ name: 'config', ok: true, detail: fs.existsSync(file) ? `${file} is valid` : `${file} absent: defaults in force` });
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err;
    checks.push({ name: 'config', ok: false, detail: err.message, fix: `edit ${file}` });
  }
  return checks;
}

function readCmdline(): string {
  try {
    return fs.readFileSync('/proc/cmdline', 'utf8');
  } catch {
    return '';
  }
}

/** A small file's trimmed text, or `otherwise` when it cannot be read. */
function readOr<T>(file: string, otherwise: T): string | T {
  try {
    return fs.readFileSync(file, 'utf8').trim();
  } catch {
    return otherwise;
  }
}

/**
 * sbd's own unit (pure): `activeState` as systemd has it, undefined when systemd has not loaded
 * the unit; `file`, the unit file when one is installed. systemd loads a unit file on demand, so
 * one installed but neither running nor enabled is not loaded: that is not "not installed".
 */
export function sbdUnitCheck(activeState: string | undefined, file: string | undefined): Check {
  const detail = activeState !== undefined ? `${SERVICE_UNIT} is ${activeState}`
    : file !== undefined ? `${SERVICE_UNIT} is installed (${file}) but not loaded: neither running nor enabled` : `${SERVICE_UNIT} is not installed`;
  return { name: 'sbd unit', ok: activeState === 'active', detail, fix: 'sbctl install --now' };
}

/** The user manager's children the sessions' slice yields to: sbd's own group (units/sbd.service
 * puts it in the root slice, so sbd.service sits straight under the manager; a unit installed
 * before that change runs in app.slice) and systemd --user's own scope. */
const SBD_GROUP = SERVICE_UNIT;
const SBD_OLD_SLICE = 'app.slice';
const MANAGER_SCOPE = 'init.scope';

/** Which of the manager's children holds sbd (pure over the names present): its own group, or
 * app.slice, where sbd ran before units/sbd.service had Slice=-.slice (and where it runs from a
 * unit installed then). */
export function sbdGroupName(present: (name: string) => boolean): string {
  return present(SBD_GROUP) ? SBD_GROUP : SBD_OLD_SLICE;
}

/**
 * The sessions' share of the CPU beside sbd (pure): units/sessions.slice's CPUWeight (a fifth of
 * its siblings') counts only where the user manager has the cpu controller (`offered`: its
 * cgroup.controllers). `weight`: the slice's cpu.weight as the kernel has it, undefined while the
 * slice is not running; `siblings`: the cpu.weight of sbd's group and systemd --user's scope, as
 * read (undefined: not there). Without a lighter slice, in a storm of sessions against their
 * brakes, sbd and systemd --user wait for a CPU behind the sessions' processes (bench/RESULTS.md,
 * issue 15 item 5).
 */
export function cpuCheck(offered: string, weight: string | undefined, mgr: string, siblings: Record<string, string | undefined> = {}): Check {
  const name = 'cpu delegated';
  if (!offered.split(/\s+/).includes('cpu')) {
    return { name, ok: false, detail: `${mgr}: no cpu controller ("${offered}"): the sessions cannot be made to yield the CPU, and in a storm of sessions against their brakes sbd judges late`, fix: 'add Delegate=cpu to user@.service (systemctl edit user@.service; Debian 12 delegates it by default), then restart the user manager' };
  }
  if (weight === undefined) return { name, ok: true, detail: `${mgr}: cpu delegated; ${SLICE_UNIT} takes its weight when a session runs` };
  const known = Object.entries(siblings).filter((e): e is [string, string] => e[1] !== undefined);
  const said = known.length ? known.map(([unit, w]) => `${unit}: ${w}`).join(', ') : 'its siblings\' not readable';
  const heavier = known.filter(([, w]) => Number(w) <= Number(weight));
  if (heavier.length) {
    return { name, ok: false, detail: `${mgr}/${SLICE_UNIT}: cpu.weight ${weight}, not below ${heavier.map(([unit, w]) => `${unit}'s ${w}`).join(' or ')}: in a storm of sessions against their brakes, sbd and systemd --user wait for a CPU behind them`, fix: `give ${SLICE_UNIT} a lighter CPUWeight than ${heavier.map(([unit]) => unit).join(' and ')} (its unit file says CPUWeight=20: sbctl install puts it back; systemctl --user show -p CPUWeight ${[SLICE_UNIT, ...heavier.map(([unit]) => unit)].join(' ')} says what each has)` };
  }
  return { name, ok: true, detail: `${mgr}/${SLICE_UNIT}: cpu.weight ${weight} (${said}), so the sessions yield the CPU to sbd and systemd --user` };
}

/**
 * PSI, from whether /proc/pressure/memory exists and the kernel command line (pure). Without it
 * sbd still watches every session, by the fallback measure (design.md §4); the one thing that
 * turns PSI on is the kernel argument psi=1 (RHEL-family kernels are built with it off).
 */
export function psiCheck(present: boolean, cmdline: string): Check {
  if (present) return { name: 'PSI', ok: true, detail: '/proc/pressure/memory present' };
  const psiArgs = cmdline.split(/\s+/).filter((a) => a.startsWith('psi='));
  const last = psiArgs[psiArgs.length - 1]; // the kernel takes the last one
  const why = last === 'psi=0' ? 'the kernel was booted with psi=0' : 'the kernel has it off (built without it, or off by default as on RHEL-family kernels)';
  return {
    name: 'PSI',
    ok: false,
    detail: `PSI is off: /proc/pressure/memory missing, ${why}; sbd samples each session every few seconds instead (coarser, so the grace before a stop is doubled)`,
    fix: 'boot with the kernel argument psi=1. On GRUB: add psi=1 to GRUB_CMDLINE_LINUX in /etc/default/grub'
      + (last === 'psi=0' ? ' (and remove psi=0)' : '')
      + ', run update-grub (Debian, Ubuntu) or grub2-mkconfig -o /boot/grub2/grub.cfg (or: grubby --update-kernel=ALL --args=psi=1 on RHEL-family systems), then reboot',
  };
}

/**
 * sbctl and sbd by name (pure over where PATH finds them). `npm start` links both into the user's
 * bin directory (~/.local/bin, or $XDG_BIN_HOME), which many distributions put on PATH only when
 * it exists at login.
 */
export function pathCheck(found: { sbctl: string | undefined; sbd: string | undefined }, pathVar: string, binDir: string, home: string, startupFile = '.profile'): Check {
  const missing = (['sbctl', 'sbd'] as const).filter((n) => found[n] === undefined);
  if (missing.length === 0) return { name: 'on PATH', ok: true, detail: `sbctl is ${found.sbctl}, sbd is ${found.sbd}` };
  const linked = missing.every((n) => fs.existsSync(path.join(binDir, n)));
  if (linked && !dirOnPath(binDir, pathVar)) {
    return {
      name: 'on PATH', ok: false,
      detail: `${missing.join(' and ')} ${missing.length > 1 ? 'are' : 'is'} in ${binDir}, which is not on PATH`,
      fix: `echo 'export PATH="${shellPath(binDir, home)}:$PATH"' >> ~/${startupFile}, then log in again (or run that export in this shell)`,
    };
  }
  return {
    name: 'on PATH', ok: false,
    detail: `${missing.join(' and ')} not found on PATH`,
    fix: `run \`npm start\` in the checkout (it links sbctl and sbd into ${binDir}), or install the package: npm install -g --prefix ~/.local sessionbrake-VERSION.tgz`,
  };
}

/** What sbd holds open against what it may (read from /proc/PID of the running sbd). */
export interface SbdResources {
  pid: number;
  /** The soft RLIMIT_NOFILE, or undefined when /proc/PID/limits could not be read. */
  openFilesLimit: number | undefined;
  openFiles: number;
  inotifyWatches: number;
  /** /proc/sys/fs/inotify/max_user_watches (shared by all of the user's processes). */
  maxUserWatches: number | undefined;
  /** sbd's inotify instances (fds), and /proc/sys/fs/inotify/max_user_instances (per user). */
  inotifyInstances?: number;
  maxUserInstances?: number | undefined;
}

/**
 * Room for this many more sessions, in open files and inotify watches: issue 15 sizes sbd for
 * 1,000-2,000 sessions.
 */
export const SESSIONS_OF_HEADROOM = 1000;
/** What one idle session costs sbd in open files: its PSI trigger (memory.pressure) and its
 * agent's pidfd (2, counted in the lab guest: bench/RESULTS.md, issue 15's idle table), and since
 * session 11 its agent's /proc stat, held for the freeze check. A session under pressure holds
 * its sample's eight files too (cpu.pressure the eighth), while its feed is awake and for FILES_LINGER_MS after (stall/feed.ts). */
export const FILES_PER_SESSION = 3;
/** And in inotify watches: memory.events.local, cgroup.events, and its heartbeat file when it has one. */
export const WATCHES_PER_SESSION = 3;

/** Open files and inotify watches: enough room for SESSIONS_OF_HEADROOM more sessions? (pure) */
export function sbdResourceChecks(r: SbdResources): Check[] {
  const files: Check = r.openFilesLimit === undefined
    ? { name: 'open files', ok: true, detail: `sbd (pid ${r.pid}) holds ${r.openFiles} open files; its limit could not be read` }
    : {
        name: 'open files',
        ok: r.openFilesLimit - r.openFiles >= SESSIONS_OF_HEADROOM * FILES_PER_SESSION,
        detail: `sbd (pid ${r.pid}) holds ${r.openFiles} of ${r.openFilesLimit} open files (${FILES_PER_SESSION} per session: its PSI trigger, its agent's pidfd and /proc stat; room for ${Math.max(0, Math.floor((r.openFilesLimit - r.openFiles) / FILES_PER_SESSION))} more sessions)`,
        fix: `systemctl --user edit ${SERVICE_UNIT}: add [Service] LimitNOFILE=65536, then systemctl --user restart ${SERVICE_UNIT}`,
      };
  const watches: Check = r.maxUserWatches === undefined
    ? { name: 'inotify watches', ok: true, detail: `sbd holds ${r.inotifyWatches} inotify watches; /proc/sys/fs/inotify/max_user_watches unreadable` }
    : {
        name: 'inotify watches',
        ok: r.maxUserWatches - r.inotifyWatches >= SESSIONS_OF_HEADROOM * WATCHES_PER_SESSION,
        detail: `sbd holds ${r.inotifyWatches} of the ${r.maxUserWatches} inotify watches a user may have (up to ${WATCHES_PER_SESSION} per session; room for ${Math.max(0, Math.floor((r.maxUserWatches - r.inotifyWatches) / WATCHES_PER_SESSION))} more sessions, fewer if the user's other programs watch files too)${r.inotifyInstances === undefined ? '' : `, on ${r.inotifyInstances} inotify instance${r.inotifyInstances === 1 ? '' : 's'}${r.maxUserInstances === undefined ? '' : ` of the ${r.maxUserInstances} a user may have`}`}`,
        fix: 'echo fs.inotify.max_user_watches=524288 | sudo tee /etc/sysctl.d/60-sessionbrake.conf && sudo sysctl --system',
      };
  return [files, watches];
}

/** The soft "Max open files" of /proc/PID/limits (pure); undefined when absent or unparsable. */
export function parseOpenFilesLimit(limits: string): number | undefined {
  const m = /^Max open files\s+(\S+)/m.exec(limits);
  if (!m) return undefined;
  return m[1] === 'unlimited' ? Number.MAX_SAFE_INTEGER : Number.isInteger(Number(m[1])) ? Number(m[1]) : undefined;
}

/** The inotify watches in one /proc/PID/fdinfo/FD text (pure): one `inotify wd:` line each. */
export function countInotifyWatches(fdinfo: string): number {
  return fdinfo.split('\n').filter((l) => l.startsWith('inotify wd:')).length;
}

function linkOf(file: string): string | undefined {
  try {
    return fs.readlinkSync(file);
  } catch {
    return undefined;
  }
}

function readSbdResources(pid: number): SbdResources {
  const read = (file: string): string | undefined => {
    try {
      return fs.readFileSync(file, 'utf8');
    } catch {
      return undefined; // gone, or not ours: said as unreadable
    }
  };
  let fds: string[] = [];
  try {
    fds = fs.readdirSync(`/proc/${pid}/fd`);
  } catch {
    /* sbd just exited: counted as none */
  }
  let inotifyWatches = 0;
  let inotifyInstances = 0;
  for (const fd of fds) {
    const info = read(`/proc/${pid}/fdinfo/${fd}`) ?? '';
    const n = countInotifyWatches(info);
    inotifyWatches += n;
    // an instance with no watch has no `inotify wd:` line: its link names it
    if (n > 0 || linkOf(`/proc/${pid}/fd/${fd}`) === 'anon_inode:inotify') inotifyInstances++;
  }
  const positive = (file: string): number | undefined => {
    const v = Number(read(file)?.trim());
    return Number.isInteger(v) && v > 0 ? v : undefined;
  };
  return {
    pid, openFilesLimit: parseOpenFilesLimit(read(`/proc/${pid}/limits`) ?? ''), openFiles: fds.length, inotifyWatches, maxUserWatches: positive('/proc/sys/fs/inotify/max_user_watches'),
    inotifyInstances, maxUserInstances: positive('/proc/sys/fs/inotify/max_user_instances'),
  };
}

export function formatChecks(checks: readonly Check[]): string {
  return checks.map((c) => `${c.ok ? 'OK  ' : 'FAIL'}  ${c.name.padEnd(18)} ${c.detail}${!c.ok && c.fix ? `\n      fix: ${c.fix}` : ''}`).join('\n');
}
