/**
 * A poll monitor (issue 13): a fast read-only probe every intervalS, run by systemd as a
 * transient timer plus service of the session's slice (monitor/poll-unit.ts says which property
 * does what). sbd holds no clock and no pipe for it: the timer starts each tick, the output goes
 * to a file followed by inotify, and each tick's receipt is read from the service when systemd
 * signals its end (monitor/poll-tick.ts judges it). After a failed tick the timer is replaced by
 * one with the backoff's longer wait (a timer's values cannot change while it runs); after
 * maxConsecutiveFailures in a row the timer is stopped and the monitor is suspended, told once.
 *
 * The same runner runs an ssh monitor (runners/ssh.ts): only its command differs.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { UnitInfo } from '../../systemd/types';
import { type MonitorHost, type MonitorSession, MonitorRequestError, type Runner, type RunnerKit } from '../runner';
import { decideTick, tickEnded } from '../poll-tick';
import { type Cadence, cadenceFor, pollServiceName, pollServiceProperties, pollTimerName, pollTimerProperties } from '../poll-unit';
import type { MonitorSpec } from '../spec';
import type { MonitorRecord } from '../store';

export type ProbeSpec = Extract<MonitorSpec, { type: 'poll' | 'ssh' }>;

/** What a tick runs: the program's absolute path and the argv (argv[0] its name). */
export interface ProbeCommand {
  programPath: string;
  argv: string[];
}

/** Where a poll's ticks write their output: one file per monitor. */
export const probeOutput = (host: MonitorHost, id: string): string => path.join(host.outputDir, `${id}.log`);

const isProbe = (r: MonitorRecord): r is MonitorRecord & { spec: ProbeSpec } => r.spec.type === 'poll' || r.spec.type === 'ssh';

const ACTIVE = new Set(['active', 'activating', 'reloading']);

/** systemd unloads a stopped pair on a later turn of its loop (slower under load); tries of a re-creation meanwhile, and the pause between them: 3 s in all. */
const RECREATE_TRIES = 10;
const RECREATE_PAUSE_MS = 300;
const unitExists = (err: unknown): boolean => /UnitExists|already loaded|already exists/.test(`${(err as { type?: string }).type ?? ''} ${(err as Error).message}`);
const notLoaded = (err: unknown): boolean => /NoSuchUnit|not loaded|not found/i.test(`${(err as { type?: string }).type ?? ''} ${(err as Error).message}`);

/** Monitors whose timer sbd is replacing right now: its going away is ours, not news. */
const replacing = new Set<string>();
/** One change of a monitor's units at a time. */
const chains = new Map<string, Promise<void>>();

function serially(id: string, f: () => Promise<void>): Promise<void> {
  const next = (chains.get(id) ?? Promise.resolve()).then(f);
  const kept = next.catch(() => undefined);
  chains.set(id, kept);
  void kept.then(() => {
    if (chains.get(id) === kept) chains.delete(id);
  });
  return next;
}

async function stopQuietly(kit: RunnerKit, unit: string, id: string): Promise<void> {
  try {
    await kit.host.stopUnit(unit);
  } catch (err) {
    if (!notLoaded(err)) kit.host.log('warn', 'stopping a monitor unit failed', { monitor: id, unit, err });
  }
}

/** Start the timer and its service in one StartTransientUnit call. */
async function startPair(kit: RunnerKit, record: MonitorRecord & { spec: ProbeSpec }, session: MonitorSession, command: ProbeCommand, cadence: Cadence): Promise<void> {
  const spec = record.spec;
  const input = {
    monitorId: record.id, handle: kit.handle(record.id), label: spec.label, kind: spec.type, sessionId: record.sessionId, slice: session.slice,
    programPath: command.programPath, argv: command.argv, outputFile: probeOutput(kit.host, record.id),
    memoryHighBytes: session.memoryHigh === Infinity ? 2 ** 62 : session.memoryHigh, timeoutS: spec.timeoutS,
  };
  for (let attempt = 1; ; attempt++) {
    try {
      await kit.host.startTransientTimer(pollTimerName(record.id), pollTimerProperties(input, cadence), pollServiceName(record.id), pollServiceProperties(input));
      return;
    } catch (err) {
      if (!unitExists(err) || attempt >= RECREATE_TRIES) throw err;
      await new Promise((r) => setTimeout(r, RECREATE_PAUSE_MS));
    }
  }
}

/** The running of poll-like monitors, given how each builds its command. */
export function probeRunner(commandOf: (host: MonitorHost, spec: ProbeSpec) => ProbeCommand): Required<Pick<Runner, 'restart'>> & Runner {
  /** Stop the timer (no new tick) and the service (a tick under way). */
  async function stopUnits(kit: RunnerKit, id: string): Promise<void> {
    await stopQuietly(kit, pollTimerName(id), id);
    await stopQuietly(kit, pollServiceName(id), id);
  }

  /** Replace the timer with one of another cadence (the backoff, or the interval again). */
  function recadence(kit: RunnerKit, id: string, cadenceOf: (r: MonitorRecord & { spec: ProbeSpec }) => Cadence): Promise<void> {
    return serially(id, async () => {
      replacing.add(id);
      try {
        await stopUnits(kit, id);
        const r = kit.get(id);
        if (!r || !isProbe(r) || r.lifecycle !== 'running') return;
        const session = kit.host.session(r.sessionId);
        if (!session) return; // its session's end stops it
        await startPair(kit, r, session, commandOf(kit.host, r.spec), cadenceOf(r));
      } catch (err) {
        const r = kit.get(id);
        if (r && r.lifecycle === 'running') {
          const reason = `systemd refused to start its timer again: ${(err as Error).message}`;
          kit.save({ ...r, lifecycle: 'gone', reason });
          kit.tell(r, 'gone', reason);
        }
      } finally {
        replacing.delete(id);
      }
    });
  }

  /** A tick ended: count it, judge it, and back off, return to the interval or suspend. */
  function onService(kit: RunnerKit, record: MonitorRecord & { spec: ProbeSpec }, info: UnitInfo | undefined): void {
    const spec = record.spec;
    const tick = tickEnded(info, record.unit?.invocationId, spec.timeoutS, spec.type);
    if (!tick) return;
    const decision = decideTick(record.consecutiveFailures, tick, spec.maxConsecutiveFailures);
    const counted: MonitorRecord = {
      ...record, ticks: record.ticks + 1, consecutiveFailures: decision.consecutiveFailures, exit: tick.exit,
      unit: { name: pollTimerName(record.id), invocationId: tick.invocationId },
      ...(decision.next === 'suspend' ? { lifecycle: 'suspended' as const, reason: decision.notice?.text ?? 'suspended' } : {}),
    };
    kit.save(counted);
    if (decision.notice) kit.tell(counted, decision.notice.kind, decision.notice.text);
    switch (decision.next) {
      case 'keep':
        return;
      case 'backoff':
        void recadence(kit, record.id, (r) => cadenceFor(r.spec.intervalS, r.consecutiveFailures, 0));
        return;
      case 'interval':
        // the tick that succeeded has just run: the next comes an interval later
        void recadence(kit, record.id, (r) => cadenceFor(r.spec.intervalS, 0, r.spec.intervalS));
        return;
      case 'suspend':
        // its output stays followed: the last tick's lines may still be on their way
        void serially(record.id, () => stopUnits(kit, record.id));
        return;
    }
  }

  /** The timer went away or failed while the monitor runs and sbd did not stop it: said, not hidden. */
  function onTimer(kit: RunnerKit, record: MonitorRecord, info: UnitInfo | undefined): void {
    if (replacing.has(record.id) || (info && ACTIVE.has(info.activeState))) return;
    const reason = info ? `its timer is ${info.activeState} (${info.result ?? 'unknown'}): no more ticks` : 'its timer was stopped outside sbd: no more ticks';
    kit.save({ ...record, lifecycle: 'gone', reason });
    kit.tell(record, 'gone', reason);
  }

  async function begin(kit: RunnerKit, record: MonitorRecord, session: MonitorSession): Promise<void> {
    if (!isProbe(record)) return;
    let command: ProbeCommand;
    try {
      command = commandOf(kit.host, record.spec);
    } catch (err) {
      kit.save({ ...record, lifecycle: 'gone', reason: (err as Error).message });
      throw err;
    }
    const output = probeOutput(kit.host, record.id);
    fs.mkdirSync(kit.host.outputDir, { recursive: true, mode: 0o700 });
    fs.closeSync(fs.openSync(output, 'a', 0o600));
    const { reason: _reason, ...rest } = record;
    const fresh: MonitorRecord & { spec: ProbeSpec } = { ...rest, spec: record.spec, lifecycle: 'running', consecutiveFailures: 0, unit: { name: pollTimerName(record.id) }, offset: fs.statSync(output).size };
    kit.save(fresh);
    kit.follow(record.id, output);
    try {
      await serially(record.id, () => startPair(kit, fresh, session, command, cadenceFor(fresh.spec.intervalS, 0, 0)));
    } catch (err) {
      kit.unfollow(output);
      kit.save({ ...(kit.get(record.id) ?? fresh), lifecycle: 'gone', reason: `systemd refused to start it: ${(err as Error).message}` });
      throw new MonitorRequestError(`systemd refused to start the monitor's timer ${pollTimerName(record.id)}: ${(err as Error).message}`);
    }
  }

  return {
    countsTicks: true,
    begin,
    resume(kit, record) {
      // an ssh probe after sbd's restart (a local poll awaits confirmation instead: monitor/recovery.ts)
      if (!isProbe(record)) return;
      const output = probeOutput(kit.host, record.id);
      kit.follow(record.id, output);
      kit.catchUp(output);
      void serially(record.id, async () => {
        const timer = await kit.host.getUnit(pollTimerName(record.id));
        if (timer && ACTIVE.has(timer.activeState)) {
          // it ticked on while sbd was away: judge its last tick, if not judged yet
          const now = kit.get(record.id);
          if (now && isProbe(now) && now.lifecycle === 'running') onService(kit, now, await kit.host.getUnit(pollServiceName(record.id)));
          return;
        }
        const now = kit.get(record.id);
        const session = kit.host.session(record.sessionId);
        if (!now || !isProbe(now) || now.lifecycle !== 'running' || !session) return;
        await startPair(kit, now, session, commandOf(kit.host, now.spec), cadenceFor(now.spec.intervalS, now.consecutiveFailures, 0));
      }).catch((err: unknown) => {
        const now = kit.get(record.id);
        if (now && now.lifecycle === 'running') kit.save({ ...now, lifecycle: 'gone', reason: `cannot resume after sbd's restart: ${(err as Error).message}` });
      });
    },
    async stop(kit, record) {
      kit.unfollow(probeOutput(kit.host, record.id));
      await serially(record.id, () => stopUnits(kit, record.id));
    },
    onUnit(kit, record, info, unit) {
      if (!isProbe(record) || record.lifecycle !== 'running') return;
      if (unit === pollTimerName(record.id)) onTimer(kit, record, info);
      else if (unit === pollServiceName(record.id)) onService(kit, record, info);
    },
    /**
     * Run a poll again from a clean start (sbctl monitor recover approve, after it awaited
     * confirmation or was suspended): leftover units stopped, failures reset, a fresh timer and
     * service. Throws MonitorRequestError when its session has ended or its program is gone.
     */
    async restart(kit, record) {
      const session = kit.host.session(record.sessionId);
      if (!session) throw new MonitorRequestError(`its session "${record.sessionId}" has ended: start a new monitor in a live session`);
      kit.unfollow(probeOutput(kit.host, record.id));
      await serially(record.id, () => stopUnits(kit, record.id));
      await begin(kit, record, session);
    },
  };
}

/** A local probe's command: its program on sbd's PATH (or absolute), its argv as given. */
export function pollCommand(host: MonitorHost, spec: ProbeSpec): ProbeCommand {
  const program = spec.argv[0] ?? '';
  const programPath = path.isAbsolute(program) ? program : host.resolveProgram(program);
  if (programPath === undefined) throw new MonitorRequestError(`"${program}" is not on sbd's PATH: give its absolute path`);
  return { programPath, argv: [...spec.argv] };
}

export const pollRunner = probeRunner(pollCommand);

/** Start a poll again (recover approve): see probeRunner's restart. */
export const restartPoll = (kit: RunnerKit, record: MonitorRecord): Promise<void> => pollRunner.restart(kit, record);
