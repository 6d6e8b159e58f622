/**
 * sbd wired together: config, bus, sessions registry, one event feed per session, the brake
 * controller, incidents, persisted state, the D-Bus face and sd_notify.
 */
import * as path from 'node:path';
import type * as dbus from 'dbus-next';
import { cgroupsInSlice } from '../actions/machine';
import { SliceCounts } from '../cgroup/slice-count';
import { cgroupOver } from '../cgroup/read';
import type { Config } from '../config/schema';
import { noticeFor } from '../inbox/from-incident';
import { InboxWriter, inboxDir } from '../inbox/store';
import { FileWatch } from '../native';
import { type Session, SessionRegistry } from '../sessions/registry';
import { recordedUnits, recordsDir, removeRecord } from '../sessions/record';
import { type FeedMode, type ServiceHealth, type SessionRow, type SliceRow, rowFrom } from '../sessions/status';
import { heartbeatAge, readSessionFigures } from '../sessions/snapshot';
import { StatusFigures } from './status-figures';
import { AWAKE_FEEDS_OF_A_STORM, AwakeFeeds, SessionFeed } from '../stall/feed';
import { DbusUserManager } from '../systemd/user-manager';
import { VERSION } from '../version';
import { claimServiceName, exportService } from './bus-service';
import { recoverMonitors, startMonitors } from './monitors';
import { BrakeController } from './controller';
import { Incidents } from './incidents';
import { EarlySignals } from './early-signals';
import { FreezeWatch } from './freeze-watch';
import { StateRecords } from './state-record';
import { LeftoverReaper } from './leftovers';
import { SliceArbiter } from './slice-arbiter';
import { NotifyCommand } from './notify-command';
import type { Logger } from './log';
import { notify, startWatchdog } from './notify';
import { OomReads } from '../oom/reads';
import { OomKillWatch } from '../oom/watch';
import { incidentJournal } from '../journal/incident-journal';
import { type SavedSession, type SavedState, defaultStatePath, loadState, saveState } from './state-file';
import { StateWriter } from './state-writer';
import { bootId, monotonicMs } from '../util/clock';
import { currentOf } from '../actions/machine';
import { sessionVerdictFigures, sliceEpisodeScope } from '../metrics/from-verdict';
import type { SbdView, SessionState } from '../metrics/registry';
import { startMetrics } from '../metrics/start';

export interface RunningService {
  stop(): void;
}

/** The files watched for a session: its own-brake counter, its cgroup's events, its heartbeat. */
function watchedFiles(s: Session): string[] {
  const files = [path.join(s.cgroupDir, 'memory.events.local'), path.join(s.cgroupDir, 'cgroup.events')];
  if (s.heartbeat !== undefined) files.push(s.heartbeat);
  return files;
}

/** The status line systemd shows is updated at most this often (ms): a person reads it; a second late loses nothing. */
export const STATUS_EVERY_MS = 1000;

const STATE_NAMES: Record<string, SessionState> = { clear: 'ok', warm: 'warm', hot: 'hot', 'standing-still': 'standing-still' };

export async function startService(config: Config, bus: dbus.MessageBus, log: Logger, env: NodeJS.ProcessEnv): Promise<RunningService> {
  const startedAt = monotonicMs();
  await claimServiceName(bus); // the lease first: a second sbd leaves here having read nothing
  const manager = await DbusUserManager.attach(bus);
  const registry = new SessionRegistry(manager, config.slices, recordsDir(env), (msg, fields) => log.warn(fields, msg));
  const incidents = new Incidents(log, incidentJournal(env, log)); // under journald, natively: no stdout line too
  // Told before READY (the adoption tells), signalled once the interface is exported (early-signals.ts).
  const signals = new EarlySignals();
  // Prometheus metrics (issue 14): counted from incidents and verdicts, gauges read from sbd's
  // state when the textfile is written or /metrics is scraped. The view is filled in below.
  let view: (perSession: boolean) => SbdView = () => ({ sessions: [], monitors: [] });
  const metrics = startMetrics({ config: config.metrics, version: VERSION, graceS: config.detector.graceS, slices: config.slices, view: (p) => view(p), log });
  incidents.onIncident((i) => {
    metrics.metrics.count(i);
    metrics.changed();
  });
  incidents.onIncident((i) => {
    try {
      signals.emitIncident(i);
    } catch (err) {
      log.warn({ event: 'incident-not-signalled', unit: i.unit, err }, 'cannot send the Incident signal (the incident is in the journal)');
    }
  });
  // The agent's own view (issue 13): what concerns it goes to its session's inbox, and as a signal.
  const inbox = new InboxWriter(inboxDir(env)); // one writer: it knows each file as it left it
  incidents.onIncident((i) => {
    const notice = noticeFor(i);
    if (!notice) return;
    try {
      const entry = inbox.append(i.session, { atMs: i.atMs, from: 'sbd', kind: notice.kind, text: notice.text });
      signals.emitNotice(i.session, entry);
    } catch (err) {
      log.warn({ event: 'inbox-not-written', session: i.session, err }, "cannot write the session's inbox");
    }
  });
  if (config.notifyCommand) {
    const notifier = new NotifyCommand(config.notifyCommand, config.notifyTimeoutS, log, undefined, () => {
      metrics.metrics.notifyFailed();
      metrics.changed();
    });
    incidents.onIncident((i) => notifier.run(i));
  }

  const stateFile = defaultStatePath(env);
  const saved: SavedState = loadState(stateFile, (why) => log.warn({ event: 'bad-state-file', file: stateFile }, why));
  // Coalesced (state-writer.ts): a deadline's change waits up to COALESCE_MS for others to share
  // its write; the record of an action is written before the action goes on.
  const stateWriter = new StateWriter(saved, {
    write: (state) => saveState(stateFile, state),
    onError: (err) => log.error({ event: 'state-not-saved', file: stateFile, err }, 'cannot save state: a restart now would forget running deadlines'),
  });
  // Each session's entry holds the controller's record and the freeze watch's open signals
  // (state-record.ts): each part is saved on its own, the other kept.
  const stateRecords = new StateRecords(saved, (unit, s, options) => stateWriter.save(unit, s, options), bootId);
  const save = (unit: string, s: SavedSession | undefined): void => stateRecords.saveActions(unit, s);

  const controller = new BrakeController({
    config,
    manager,
    incidents,
    sessions: () => registry.list(),
    known: (s) => registry.get(s.unit) === s, // per verdict: a map lookup, not a sorted list
    save,
    log: (level, msg, fields) => log[level](fields, msg),
  });

  const reaper = new LeftoverReaper(config, incidents, (s, err) => log.warn({ unit: s.unit, err }, 'reaping leftovers failed'));
  const freeze = new FreezeWatch(config, incidents, () => registry.values(), (unit, err, failed) =>
    log.warn({ event: 'freeze-check-failed', unit, failed, err }, `the freeze check failed for ${failed} session${failed === 1 ? '' : 's'} (first ${unit}); they are checked again next round`),
    (s, open) => stateRecords.saveFreeze(s.unit, s.invocationId, open),
    () => stateWriter.flush(),
  );
  // the awake feed's held fd, where it has one: a storm's breaches move this file many times a second
  const oomKills = new OomKillWatch({ tell: (i) => incidents.tell(i), observeOnly: config.observeOnly, heldEventsLocal: (s) => feeds.get(s.unit)?.heldText('memory.events.local') });
  const oomReads = new OomReads(oomKills);
  const feeds = new Map<string, SessionFeed>();
  const awakeFeeds = new AwakeFeeds(); // a storm stretches running deadlines' windows (stall/feed.ts), and holds back the status re-read
  const statusFigures = new StatusFigures({ read: readSessionFigures, now: monotonicMs, turn: () => new Promise((resolve) => setImmediate(resolve)), deferReread: () => awakeFeeds.count >= AWAKE_FEEDS_OF_A_STORM });
  /** Each session's last verdict state, to tell the metrics when it moved. */
  const feedStates = new Map<string, string>();
  const byFile = new Map<string, Session>();
  const watch = new FileWatch(({ path: file, kind }) => {
    if (monitorFile(file, kind)) return;
    if (slices.onFile(file, kind)) return;
    const s = byFile.get(file);
    if (!s) return;
    if (file === s.heartbeat) {
      // Written in place, or replaced by a rename (the old inode is gone: watch the new one).
      if (kind === 'gone') {
        try {
          watch.add(file, { attributes: true });
        } catch {
          byFile.delete(file); // removed for good: the freeze check's timer still looks
        }
      }
      return freeze.check(s); // a heartbeat: a recovery is told at once
    }
    if (file.endsWith('cgroup.events')) {
      // The kernel says the session is over (no process left, or the cgroup removed): drop it
      // now, not when systemd's UnitRemoved comes.
      const over = kind === 'gone' ? 'gone (cgroup.events removed)' : cgroupOver(s.cgroupDir);
      if (over !== undefined) registry.ended(s, over);
      return;
    }
    if (kind !== 'modified' || !file.endsWith('memory.events.local')) return;
    // Its own brake fired: a hint to take windows (the trigger may not have fired yet).
    const feed = feeds.get(s.unit);
    feed?.hint('own brake fired');
    // Or the kernel's OOM killer struck (oom/reads.ts: an awake feed reads it at its next window).
    oomReads.changed(s, feed?.mode === 'psi' && feed.sampling);
  });
  watch.unref();
  // The agents' background work (issue 13): monitors, on the same watch and unit events.
  const monitorWiring = {
    env, manager, registry, log, inbox, bus: () => signals,
    watchFile: (file: string, options?: { entries?: boolean }) => watch.add(file, options),
    unwatchFile: (file: string) => void watch.remove(file),
    owner: { busName: (bus as unknown as { name?: string }).name ?? '', epoch: Date.now() },
  };
  const monitors = startMonitors(monitorWiring);
  const monitorFile = (file: string, kind: 'modified' | 'gone'): boolean => monitors.onFile(file, kind);
  // One level up (design.md §11): each configured slice with sessions, and the machine.
  const slices = new SliceArbiter({
    config,
    manager,
    incidents,
    brakes: controller,
    sessions: () => registry.values(),
    countInSlice: (slice) => registry.countInSlice(slice),
    feedOf: (unit) => feeds.get(unit),
    watchFile: (file) => watch.add(file),
    unwatchFile: (file) => watch.remove(file),
    log,
    adopting: () => registry.adopting !== undefined,
    observeVerdict: (v, sample) => {
      const scope = sliceEpisodeScope(v, sample);
      if (scope) metrics.metrics.episode(scope);
    },
  });

  const feedMode = (): FeedMode => {
    const modes = new Set([...feeds.values()].map((f) => f.mode));
    if (modes.size === 0) return 'none';
    if (modes.size > 1) return 'mixed';
    return modes.has('psi') ? 'psi' : 'sampling';
  };
  const updateStatus = (): void => {
    const a = registry.adopting;
    if (a) {
      notify(`STATUS=adopting the sessions: ${a.listed === null ? 'listing the units' : `${a.listed} units to read`} (sbctl status shows how far)`);
      return;
    }
    notify(`STATUS=watching ${registry.size} session${registry.size === 1 ? '' : 's'} (feed ${feedMode()})${config.observeOnly ? ', observe-only' : ''}`);
  };

  // A session added or removed changes the status line; told to systemd at most once a
  // STATUS_EVERY_MS: each STATUS= makes systemd signal a change of sbd.service (two
  // PropertiesChanged), 400 of them while a storm's 200 sessions were made.
  let statusTimer: NodeJS.Timeout | undefined;
  const statusSoon = (): void => {
    if (registry.adopting || statusTimer) return; // while adopting: once at READY and once when done
    statusTimer = setTimeout(() => {
      statusTimer = undefined;
      updateStatus();
    }, STATUS_EVERY_MS);
    statusTimer.unref();
  };

  const sliceCounts = new SliceCounts(cgroupsInSlice, monotonicMs);
  registry.on('added', (s) => {
    log.info({ event: 'session-added', unit: s.unit, id: s.id, cgroup: s.cgroupDir, agentPid: s.agentPid, memoryHigh: s.memoryHigh, memoryMax: s.memoryMax }, 'session added');
    const feed = new SessionFeed(s.cgroupDir, {
      config: config.detector,
      awake: awakeFeeds,
      // the kernel's count (every session of the slice has its directory there); sbd's own only
      // when the slice cannot be read
      unitsInSlice: () => sliceCounts.get(path.dirname(s.cgroupDir)) ?? registry.countInSlice(s.slice),
      onVerdict: (v, sample) => {
        const figures = sessionVerdictFigures(v, sample);
        if (figures.episode) metrics.metrics.episode('session');
        if (figures.onsetToVerdictS !== undefined) metrics.metrics.verdictAfterOnset(figures.onsetToVerdictS);
        if (feedStates.get(s.unit) !== v.state) {
          feedStates.set(s.unit, v.state);
          metrics.changed(); // warm, hot: the sessions gauge moved
        }
        controller.onVerdict(s, feed, v, sample);
      },
      onSample: (raw) => oomReads.sampled(s, raw.oomKills),
      // not from inside the 'added' handler (a restored deadline samples at once): on the next turn
      onGone: () => setImmediate(() => registry.ended(s, 'gone (PSI trigger POLLERR, or vanished while sampling)')),
      log: (msg, fields) => log.debug(fields, msg),
    });
    feeds.set(s.unit, feed);
    feed.start();
    if (feed.mode === 'timer') {
      incidents.tell({ type: 'feed-fallback', unit: s.unit, session: s.id, atMs: Date.now(), observeOnly: config.observeOnly, message: `sampled every ${config.detector.fallbackIntervalS} s: ${feed.fallbackReason ?? ''}` });
    }
    for (const file of watchedFiles(s)) {
      try {
        watch.add(file, { attributes: file === s.heartbeat }); // a heartbeat may be renewed by `touch`
        byFile.set(file, s);
      } catch (err) {
        log.warn({ unit: s.unit, file, err }, 'cannot watch a file of the session');
      }
    }
    const savedSession = saved[s.unit];
    // a record of another invocation of the unit means nothing for this session
    if (savedSession && savedSession.invocationId !== s.invocationId) stateRecords.drop(s.unit);
    else if (savedSession) {
      controller.restore(s, feed, savedSession);
      if (savedSession.freeze) freeze.restore(s.unit, savedSession.freeze, savedSession.bootId !== undefined && savedSession.bootId === bootId());
    }
    reaper.watch(s);
    slices.watch(s);
    oomKills.watch(s);
    statusSoon();
    metrics.changed();
  });
  registry.on('removed', (s, why) => {
    log.info({ event: 'session-removed', unit: s.unit, id: s.id, why }, 'session removed');
    feeds.get(s.unit)?.stop();
    feeds.delete(s.unit);
    feedStates.delete(s.unit);
    for (const file of watchedFiles(s)) {
      watch.remove(file);
      byFile.delete(file);
    }
    freeze.forget(s.unit);
    controller.forget(s.unit);
    statusFigures.forget(s.unit);
    reaper.forget(s);
    oomReads.removed(s); // a kill that ended the session is still told
    incidents.forget(s.unit);
    stateRecords.drop(s.unit);
    slices.unwatch(s);
    statusSoon();
    metrics.changed();
  });

  /** The session's state as status shows it. */
  const sessionState = (s: Session): SessionState => {
    const feed = feeds.get(s.unit);
    // A running deadline is standing still, whether or not a verdict came since it was
    // restored after a restart (the first window after a restart is two seconds away).
    return controller.stopping(s.unit) ? 'stopping' : feed?.state.deadline ? 'standing-still' : STATE_NAMES[feed?.lastVerdict?.state ?? 'clear'] ?? 'ok';
  };
  view = (perSession) => {
    const now = monotonicMs(); // the deadlines' clock
    return {
      sessions: registry.list().map((s) => {
        const feed = feeds.get(s.unit);
        const deadline = feed?.state.deadline;
        return {
          name: s.id,
          slice: s.slice,
          state: sessionState(s),
          feed: feed?.mode,
          standingStillS: deadline ? Math.max(0, (now - deadline.startedAtMs) / 1000) : undefined,
          memoryHighBytes: s.memoryHigh,
          ...(perSession ? { currentBytes: currentOf(s.cgroupDir) } : {}),
        };
      }),
      monitors: monitors.list().map((r) => r.lifecycle),
    };
  };
  const monitorStates = new Map<string, string>();
  monitors.observe({
    saved: (r) => {
      if (monitorStates.get(r.id) === r.lifecycle) return; // a tick's save: nothing the metrics show
      monitorStates.set(r.id, r.lifecycle);
      metrics.changed();
    },
  });

  const health = (): ServiceHealth => ({
    running: true, pid: process.pid, version: VERSION, uptimeS: (monotonicMs() - startedAt) / 1000, feed: feedMode(), observeOnly: config.observeOnly, slices: config.slices,
    ...(registry.adopting ? { adopting: { ...registry.adopting } } : {}),
  });
  const sessionRows = async (): Promise<SessionRow[]> => {
    const listed = registry.list();
    const readings = await statusFigures.get(listed);
    const now = monotonicMs(); // the deadline's and the readings' clock; heartbeat ages are read against the wall clock (file mtimes)
    const wall = Date.now();
    const rows: SessionRow[] = [];
    for (const s of listed) {
      const reading = readings.get(s.unit);
      if (reading === undefined || registry.get(s.unit) !== s) continue; // its cgroup vanished, or it ended meanwhile
      const feed = feeds.get(s.unit);
      const deadline = feed?.state.deadline;
      const live = { state: sessionState(s), deadlineS: deadline ? Math.max(0, (deadline.endsAtMs - now) / 1000) : null, lastAction: incidents.lastAction(s.unit), feed: feed?.describe() ?? null };
      rows.push(rowFrom(s, live, reading.figures, heartbeatAge(s.heartbeat, wall), Math.max(0, (now - reading.atMs) / 1000)));
    }
    return rows;
  };
  const sliceRows = (): Promise<SliceRow[]> | undefined => (config.arbitration.enabled ? slices.rows() : undefined);

  // Adopt every existing session. READY=1 waits for it at most adoptBeforeReadyS: with thousands
  // of sessions the rest is adopted after READY, status saying "adopting" meanwhile.
  registry.follow();
  const adoption = registry.adopt().then(async () => {
    // Saved state and session records of sessions that no longer exist: forget them (only now:
    // an sbd stopped mid-adoption leaves the deadlines of those it had not read yet in place).
    for (const unit of Object.keys(saved)) if (!registry.get(unit)) stateRecords.drop(unit);
    const records = recordsDir(env);
    if (records) for (const unit of recordedUnits(records)) if (!registry.get(unit)) removeRecord(records, unit);
    // The monitors are recovered against their sessions, so only now: a session not read yet
    // would count as ended, and its monitors would be stopped or forgotten.
    await recoverMonitors(monitors, monitorWiring);
    log.info({ event: 'adopted', sessions: registry.size, ms: Math.round(monotonicMs() - startedAt) }, `adopted ${registry.size} session${registry.size === 1 ? '' : 's'}`);
    updateStatus();
    return true;
  });
  const adoptedBeforeReady = await Promise.race([adoption, new Promise<false>((resolve) => setTimeout(resolve, config.adoptBeforeReadyS * 1000, false).unref())]);
  if (!adoptedBeforeReady) {
    // systemd restarts sbd (Restart=on-failure) if it cannot list or read the units now
    adoption.catch((err: unknown) => {
      log.fatal({ event: 'adoption-failed', err }, 'cannot adopt the sessions; exiting');
      process.exit(1);
    });
  }
  const busService = await exportService(bus, { health, sessions: sessionRows, slices: sliceRows, arbitratesSlices: () => config.arbitration.enabled }, monitors);
  const early = signals.attach(busService, (err) => log.warn({ event: 'incident-not-signalled', err }, 'cannot send a signal told before READY (it is in the journal)'));
  if (early > 0 || signals.dropped > 0) log.info({ event: 'early-signals', sent: early, dropped: signals.dropped }, `sent ${early} signal${early === 1 ? '' : 's'} told before READY${signals.dropped > 0 ? `; ${signals.dropped} older ones dropped (in the journal)` : ''}`);
  log.info({ event: 'ready', sessions: registry.size, adopting: registry.adopting, slices: config.slices, observeOnly: config.observeOnly, feed: feedMode(), version: VERSION }, 'sbd ready');
  notify('READY=1');
  updateStatus();
  const stopWatchdog = startWatchdog(env, process.pid, (lateMs, intervalMs) =>
    log.warn({ event: 'watchdog-late', lateMs: Math.round(lateMs), watchdogMs: intervalMs }, `the watchdog ping came ${(lateMs / 1000).toFixed(1)} s after it was due: sbd's event loop was held at least that long (systemd kills sbd when no ping comes within ${intervalMs / 1000} s)`),
  );
  return {
    stop: () => {
      stopWatchdog();
      if (statusTimer) clearTimeout(statusTimer);
      metrics.close(); // the textfile stays: its age shows sbd stopped
      freeze.stop();
      monitors.close();
      slices.stop();
      for (const f of feeds.values()) f.stop();
      watch.close();
      stateWriter.stop(); // the deadlines still waiting for their write
    },
  };
}
