/**
 * `sbctl doctor`: what sbd needs from this machine, one line per check, OK or FAIL with the fix.
 * Exit 1 on any FAIL.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { ConfigError, defaultConfigPath, loadConfig } from '../config/load';
import { parseProcCgroup } from '../cgroup/parse';
import { PsiTrigger } from '../native';
import { userBusAddress } from '../systemd/address';
import { DbusUserManager } from '../systemd/user-manager';
import { SERVICE_UNIT } from './install';

export interface Check {
  name: string;
  ok: boolean;
  detail: string;
  /** What to do about a FAIL. */
  fix?: string;
}

/** The user manager's cgroup: the user@UID.service ancestor of this process's cgroup. */
function userManagerCgroup(uid: number): string | undefined {
  const own = parseProcCgroup(fs.readFileSync('/proc/self/cgroup', 'utf8'), '/proc/self/cgroup');
  const m = own === undefined ? null : new RegExp(`^(.*/user@${uid}\\.service)(/|$)`).exec(own);
  return m ? `/sys/fs/cgroup${m[1]}` : undefined;
}

export async function runChecks(env: NodeJS.ProcessEnv, configFile: string | undefined): Promise<Check[]> {
  const checks: Check[] = [];
  const uid = process.getuid?.() ?? -1;
  const mounts = fs.readFileSync('/proc/self/mounts', 'utf8');
  const v2 = /^cgroup2 \/sys\/fs\/cgroup cgroup2 /m.test(mounts);
  checks.push({ name: 'cgroup v2', ok: v2, detail: v2 ? 'cgroup2 mounted at /sys/fs/cgroup' : 'no cgroup2 at /sys/fs/cgroup', fix: 'boot with systemd.unified_cgroup_hierarchy=1 (the default since systemd 247)' });

  const mgr = v2 ? userManagerCgroup(uid) : undefined;
  const controllers = mgr && fs.existsSync(path.join(mgr, 'cgroup.subtree_control')) ? fs.readFileSync(path.join(mgr, 'cgroup.subtree_control'), 'utf8').trim() : '';
  const delegated = controllers.split(' ').includes('memory');
  checks.push({
    name: 'memory delegated',
    ok: delegated,
    detail: mgr ? `${mgr}: subtree_control "${controllers}"` : `this process is not under user@${uid}.service`,
    fix: 'add Delegate=memory to user@.service (systemctl edit user@.service; Debian 12 does by default), and run sbctl inside your user session',
  });

  const psi = fs.existsSync('/proc/pressure/memory');
  checks.push({ name: 'PSI', ok: psi, detail: psi ? '/proc/pressure/memory present' : '/proc/pressure/memory missing', fix: 'boot a kernel with CONFIG_PSI=y and psi=1 on its command line' });
  if (psi && mgr) {
    const file = path.join(mgr, 'memory.pressure');
    try {
      PsiTrigger.arm(file, { kind: 'full', stallUs: 200_000, windowUs: 2_000_000 }, () => {}).close();
      checks.push({ name: 'PSI triggers', ok: true, detail: `unprivileged 2 s trigger armed on ${file}` });
    } catch (err) {
      checks.push({ name: 'PSI triggers', ok: false, detail: `${(err as Error).message}`, fix: 'sbd falls back to sampling every 5 s; a kernel ≥ 6.1 allows unprivileged 2 s triggers' });
    }
  }

  let manager: DbusUserManager | undefined;
  try {
    manager = await DbusUserManager.connect(userBusAddress(env));
    checks.push({ name: 'user bus', ok: true, detail: `systemd --user reachable at ${userBusAddress(env)}` });
  } catch (err) {
    checks.push({ name: 'user bus', ok: false, detail: (err as Error).message, fix: 'log in, or enable lingering (loginctl enable-linger), so that your user manager and bus run' });
  }

  const user = os.userInfo().username;
  const linger = fs.existsSync(`/var/lib/systemd/linger/${user}`);
  checks.push({ name: 'linger', ok: linger, detail: linger ? `enabled for ${user}` : `not enabled for ${user}: sessions stop at logout`, fix: `loginctl enable-linger ${user}` });

  if (manager) {
    const unit = await manager.getUnit(SERVICE_UNIT);
    const active = unit?.activeState === 'active';
    checks.push({ name: 'sbd unit', ok: active, detail: unit ? `${SERVICE_UNIT} is ${unit.activeState}` : `${SERVICE_UNIT} is not installed`, fix: 'sbctl install --now' });
    manager.close();
  }

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

export function formatChecks(checks: readonly Check[]): string {
  return checks.map((c) => `${c.ok ? 'OK  ' : 'FAIL'}  ${c.name.padEnd(18)} ${c.detail}${!c.ok && c.fix ? `\n      fix: ${c.fix}` : ''}`).join('\n');
}
