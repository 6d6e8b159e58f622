/**
 * sbd's monitors wired to the rest (issue 13): records under the state directory, spawn output
 * under the runtime directory, the shared FileWatch, systemd's unit events, the session registry
 * and the inbox. At start, the records found are recovered conservatively (monitor/recovery.ts)
 * and one summary line is logged.
 */
import * as path from 'node:path';
import { type InboxWriter, toldThrough } from '../inbox/store';
import { MonitorManager } from '../monitor/manager';
import { expiresAtAsNowMs } from '../monitor/expiry';
import { planRecovery } from '../monitor/recovery';
import { MonitorTimers } from '../monitor/timers';
import { monitorsDir } from '../monitor/store';
import type { SessionRegistry } from '../sessions/registry';
import type { UserManager } from '../systemd/types';
import { bootId, monotonicMs, systemClock } from '../util/clock';
import type { BusService } from './bus-service';
import type { Logger } from './log';
import { onPath } from '../util/on-path';

export interface MonitorWiring {
  env: NodeJS.ProcessEnv;
  manager: UserManager;
  registry: SessionRegistry;
  watchFile(file: string, options?: { entries?: boolean }): void;
  unwatchFile(file: string): void;
  bus(): BusService | undefined;
  owner: { busName: string; epoch: number };
  /** sbd's one inbox writer (shared with the incidents' notices). */
  inbox: InboxWriter;
  log: Logger;
}

export function startMonitors(w: MonitorWiring): MonitorManager {
  const runtime = w.env.XDG_RUNTIME_DIR;
  const monitors = new MonitorManager({
    recordsDir: monitorsDir(w.env),
    outputDir: runtime ? path.join(runtime, 'sessionbrake', 'monitors') : path.join(monitorsDir(w.env), 'output'),
    startTransientService: (name, props) => w.manager.startTransientService(name, props),
    startTransientTimer: (timer, timerProps, service, serviceProps) => w.manager.startTransientTimer(timer, timerProps, service, serviceProps),
    stopUnit: (name) => w.manager.stopUnit(name),
    resetFailedUnit: (name) => w.manager.resetFailedUnit(name),
    getUnit: (name) => w.manager.getUnit(name),
    watchFile: w.watchFile,
    unwatchFile: w.unwatchFile,
    session: (id) => {
      const s = w.registry.get(id);
      return s ? { id: s.id, unit: s.unit, invocationId: s.invocationId, slice: s.slice, memoryHigh: s.memoryHigh } : undefined;
    },
    owner: w.owner,
    notify: (session, notice) => {
      let entry;
      try {
        // written whether or not the bus is up yet: recovery tells before sbd's interface is exported
        entry = w.inbox.append(session, notice);
      } catch (err) {
        w.log.warn({ event: 'inbox-not-written', session, err }, "cannot write the session's inbox");
        return undefined;
      }
      try {
        w.bus()?.emitNotice(session, entry);
      } catch (err) {
        w.log.warn({ event: 'notice-not-signalled', session, err }, 'cannot send the Notice signal (the notice is in the inbox)');
      }
      return entry;
    },
    toldThrough: (session) => {
      try {
        return toldThrough(w.inbox.read(session));
      } catch (err) {
        w.log.warn({ event: 'inbox-not-read', session, err }, "cannot read the session's inbox: its monitors resume from their saved offsets");
        return new Map();
      }
    },
    resolveProgram: (name) => onPath(name, w.env.PATH),
    monotonicMs,
    log: (level, msg, fields) => w.log[level](fields, msg),
  });
  // expiresAt and heartbeats, on the monotonic clock; closed with the manager
  new MonitorTimers(monitors, systemClock, (msg, fields) => w.log.warn(fields, msg));
  w.manager.onUnitEvent((e) => {
    if (!e.unit.startsWith('sb-monitor-') || e.type === 'unit-new') return;
    monitors.onUnit(e.unit).catch((err: unknown) => w.log.warn({ unit: e.unit, err }, "reading a monitor's unit failed"));
  });
  w.registry.on('removed', (s) => {
    w.inbox.forget(s.id);
    monitors.sessionEnded(s.id).catch((err: unknown) => w.log.warn({ session: s.id, err }, "ending a session's monitors failed"));
  });
  // read now, before sbd's interface is on the bus: a request before recovery sees them
  monitors.loadAll();
  return monitors;
}

/** After the registry's first listing: recover what is on record; one summary line. */
export async function recoverMonitors(monitors: MonitorManager, w: MonitorWiring): Promise<void> {
  const { records, corrupt } = monitors.toRecover();
  const views = await Promise.all(records.map(async (r) => {
    const s = w.registry.get(r.sessionId);
    const unit = r.unit ? await w.manager.getUnit(r.unit.name).catch(() => undefined) : undefined;
    return {
      id: r.id, type: r.spec.type, lifecycle: r.lifecycle, sessionLive: s !== undefined && s.invocationId === r.sessionInvocation,
      detached: r.spec.type === 'spawn' && r.spec.detached,
      // on the same boot, the monotonic deadline kept at its start: a wall-clock step while sbd was down moves nothing
      expiresAtMs: r.spec.expiresAt ? expiresAtAsNowMs(Date.parse(r.spec.expiresAt), r.expiry, { wallMs: Date.now(), monoMs: monotonicMs(), bootId: bootId() }) : undefined,
      unit: unit ? { activeState: unit.activeState, result: unit.result ?? '', nRestarts: unit.nRestarts } : undefined,
    };
  }));
  const plan = planRecovery(views, corrupt, Date.now());
  monitors.apply(plan);
  w.log.info({ event: 'monitors-recovered', actions: plan.actions }, plan.summary);
}
