/**
 * sbd wired together: config, bus, sessions registry, the D-Bus face, sd_notify. Later issues
 * add the stall detector, the brake and the reaper here.
 */
import type * as dbus from 'dbus-next';
import type { Config } from '../config/schema';
import { SessionRegistry } from '../sessions/registry';
import { recordsDir } from '../sessions/record';
import { type FeedMode, type SessionRow, type StatusReport, sessionRow } from '../sessions/status';
import { DbusUserManager } from '../systemd/user-manager';
import { VERSION } from '../version';
import { exportService } from './bus-service';
import type { Logger } from './log';
import { notify, startWatchdog } from './notify';

export interface RunningService {
  status(): StatusReport;
  stop(): void;
}

export async function startService(config: Config, bus: dbus.MessageBus, log: Logger, env: NodeJS.ProcessEnv): Promise<RunningService> {
  const startedAt = Date.now();
  const manager = await DbusUserManager.attach(bus);
  const registry = new SessionRegistry(manager, config.slices, recordsDir(env), (msg, fields) => log.warn(fields, msg));
  const feed: FeedMode = 'none';

  const updateStatus = (): void => {
    notify(`STATUS=watching ${registry.size} session${registry.size === 1 ? '' : 's'}${config.observeOnly ? ' (observe-only)' : ''}`);
  };
  registry.on('added', (s) => {
    log.info({ event: 'session-added', unit: s.unit, id: s.id, cgroup: s.cgroupDir, agentPid: s.agentPid, memoryHigh: s.memoryHigh, memoryMax: s.memoryMax }, 'session added');
    updateStatus();
  });
  registry.on('removed', (s) => {
    log.info({ event: 'session-removed', unit: s.unit, id: s.id }, 'session removed');
    updateStatus();
  });

  const status = (): StatusReport => {
    const now = Date.now();
    const rows = registry.list().map((s) => sessionRow(s, 'ok', null, null, now)).filter((r): r is SessionRow => r !== undefined);
    return {
      service: { running: true, pid: process.pid, version: VERSION, uptimeS: (now - startedAt) / 1000, feed, observeOnly: config.observeOnly, slices: config.slices },
      sessions: rows,
    };
  };

  await registry.start();
  await exportService(bus, status);
  log.info({ event: 'ready', sessions: registry.size, slices: config.slices, observeOnly: config.observeOnly, version: VERSION }, 'sbd ready');
  notify('READY=1');
  updateStatus();
  const stopWatchdog = startWatchdog(env, process.pid);
  return { status, stop: stopWatchdog };
}
