/**
 * `sbctl status` when sbd is not running: the sessions read from systemd's units and their cgroup
 * files (loaded only then: the config, the user manager and the cgroup readers).
 */
import { cgroupDir } from '../cgroup/read';
import type { Config } from '../config/schema';
import { type SessionRow, type StatusReport, sessionRow } from '../sessions/status';
import { sessionId } from '../systemd/names';
import type { DbusUserManager } from '../systemd/user-manager';
import { VERSION } from '../version';

/** The same report without sbd: from systemd's units and their cgroup files. */
export async function reportWithoutService(manager: DbusUserManager, config: Config): Promise<StatusReport> {
  const now = Date.now();
  const units = await manager.listSliceUnits(config.slices);
  const rows = units
    .map((u) => sessionRow({ unit: u.unit, id: sessionId(u.unit), cgroupDir: cgroupDir(u.controlGroup), heartbeat: undefined }, 'unwatched', null, null, now))
    .filter((r): r is SessionRow => r !== undefined)
    .sort((a, b) => a.unit.localeCompare(b.unit));
  return { service: { running: false, pid: null, version: VERSION, uptimeS: null, feed: 'none', observeOnly: config.observeOnly, slices: config.slices }, sessions: rows };
}
