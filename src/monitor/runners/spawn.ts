/**
 * A spawn monitor (issue 13): one owned process tree, run by systemd as a transient service of the
 * session's slice (monitor/unit.ts says which property does what). sbd keeps no pipe to it: the
 * output goes to a file followed by inotify, so sbd may restart under it; the exit receipt and the
 * crash-loop fuse are read from the unit when systemd signals a change. Never replayed: after a
 * restart its unit is reused while it runs, or reported gone (monitor/recovery.ts).
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { JobFailedError } from '../../systemd/job-error';
import type { UnitInfo } from '../../systemd/types';
import { type MonitorHost, MonitorRequestError, type Runner, type RunnerKit } from '../runner';
import { expiresAtMs } from '../spec';
import type { MonitorRecord } from '../store';
import { bootId } from '../../util/clock';
import { SLOW_CRASH_LOOP, countCrashes } from '../crash-count';
import { CRASH_LOOP_BURST, EXPIRY_BACKSTOP_S, spawnUnitName, spawnUnitProperties } from '../unit';

/** Where a spawn's output goes: one file per monitor. */
export const spawnOutput = (host: MonitorHost, id: string): string => path.join(host.outputDir, `${id}.log`);

const running = (info: UnitInfo | undefined): boolean =>
  info !== undefined && (info.activeState === 'active' || info.activeState === 'activating' || info.activeState === 'reloading');

/** The exit receipt of the unit's last run (pure). A unit systemd has unloaded ended well: it
 * collects inactive units, never failed ones (CollectMode=inactive, the default), so the receipt
 * of a gone unit is a clean exit. */
function exitOf(info: UnitInfo | undefined): { code: 'killed' | 'exited'; status: number } {
  return { code: info?.execMainCode === 2 || info?.execMainCode === 3 ? 'killed' : 'exited', status: info ? (info.execMainStatus ?? 0) : 0 };
}

/** The unit ended: its exit receipt, and whether systemd's crash-loop fuse blew (pure). */
export function unitEnding(info: UnitInfo | undefined): { lifecycle: 'stopped' | 'quarantined' | 'expired'; reason: string; exit: { code: string; status: number } } {
  const exit = exitOf(info);
  const code = exit.code;
  // RuntimeMaxUSec ran out (Result timeout): systemd's backstop of expiresAt, when sbd's own timer did not stop it first
  if (info?.result === 'timeout') return { lifecycle: 'expired', reason: 'its expiresAt has passed: systemd ended it (RuntimeMaxSec)', exit };
  // The fuse blew: systemd refused the next automatic restart. Its Result says so only where no
  // earlier failure set it: on an auto-restart systemd 252 keeps "exit-code" (guest 48), so the
  // restarts it made count too.
  const crashLoop = info?.result === 'start-limit-hit' || (info?.activeState === 'failed' && (info.nRestarts ?? 0) >= CRASH_LOOP_BURST);
  if (crashLoop) return { lifecycle: 'quarantined', reason: 'it crashed again and again: systemd stopped restarting it (start-limit-hit); sbctl monitor recover decides', exit };
  return { lifecycle: 'stopped', reason: `it ${code === 'killed' ? 'was killed by signal' : 'exited with status'} ${exit.status}`, exit };
}

/** systemd's own exit statuses, 200 (CHDIR) to 254: the service's setup failed (203 EXEC: the
 * program could not be executed), so the program never ran (exit-status.h reserves the range). */
const SETUP_FAILED_FIRST = 200;
const SETUP_FAILED_LAST = 254;

/** A start job that ended other than "done" after the program itself ran: its unit's last run
 * ended (exited, was killed, dumped core) with a status of the program's own, not systemd's (pure).
 * The job of a Type=exec service whose program exits before systemd saw the exec succeed stays
 * through the automatic restarts and fails when the start limit blows (guest 48 under a loaded
 * emulator, CI 2026-12-03): a crash loop, not a refusal. */
export function ranBeforeJobFailed(info: UnitInfo | undefined): boolean {
  const code = info?.execMainCode;
  if (code === undefined || code < 1 || code > 3) return false; // CLD_EXITED, CLD_KILLED, CLD_DUMPED
  const status = info?.execMainStatus ?? 0;
  return !(code === 1 && status >= SETUP_FAILED_FIRST && status <= SETUP_FAILED_LAST);
}

async function startUnit(kit: RunnerKit, record: MonitorRecord, slice: string, memoryHigh: number): Promise<void> {
  const spec = record.spec;
  if (spec.type !== 'spawn') return;
  const host = kit.host;
  const program = spec.argv[0] ?? '';
  const programPath = path.isAbsolute(program) ? program : host.resolveProgram(program);
  if (programPath === undefined) throw new MonitorRequestError(`"${program}" is not on sbd's PATH: give its absolute path`);
  fs.mkdirSync(host.outputDir, { recursive: true, mode: 0o700 });
  const output = spawnOutput(host, record.id);
  fs.closeSync(fs.openSync(output, 'a', 0o600));
  const expires = expiresAtMs(spec);
  const unit = spawnUnitName(record.id);
  kit.save({ ...record, unit: { name: unit }, offset: fs.statSync(output).size, crashes: undefined }); // a new unit: its crashes counted anew
  kit.follow(record.id, output);
  try {
    await host.startTransientService(unit, spawnUnitProperties({
      monitorId: record.id, handle: kit.handle(record.id), label: spec.label, sessionId: record.sessionId, slice,
      argv: spec.argv, programPath, cwd: spec.cwd, outputFile: output, memoryHighBytes: memoryHigh === Infinity ? 2 ** 62 : memoryHigh,
      runtimeMaxS: expires === undefined ? undefined : Math.max(1, (expires - Date.now()) / 1000 + EXPIRY_BACKSTOP_S),
    }));
  } catch (err) {
    if (err instanceof JobFailedError && (await jobOutlivedByRun(kit, record, unit))) return;
    kit.unfollow(output);
    kit.save({ ...(kit.get(record.id) ?? record), lifecycle: 'gone', reason: `systemd refused to start it: ${(err as Error).message}` });
    throw new MonitorRequestError(`systemd refused to start the monitor's unit ${unit}: ${(err as Error).message}`);
  }
  const info = await host.getUnit(unit);
  const now = kit.get(record.id) ?? record;
  kit.save({ ...now, unit: { name: unit, ...(info?.invocationId ? { invocationId: info.invocationId } : {}) } });
}

/**
 * The start job failed, but the program ran: the monitor was made, and its ending is told as any
 * other (unitEnding: a crash loop quarantined) unless a unit event has told it already.
 */
async function jobOutlivedByRun(kit: RunnerKit, record: MonitorRecord, unit: string): Promise<boolean> {
  const info = await kit.host.getUnit(unit).catch(() => undefined);
  if (!ranBeforeJobFailed(info)) return false;
  const now = kit.get(record.id) ?? record;
  const withUnit = { ...now, unit: { name: unit, ...(info?.invocationId ? { invocationId: info.invocationId } : {}) } };
  if (now.lifecycle !== 'running') return kit.save(withUnit), true;
  const ending = unitEnding(info);
  kit.save({ ...withUnit, ...ending });
  kit.tell(withUnit, ending.lifecycle === 'quarantined' ? 'quarantined' : 'exit', ending.reason);
  return true;
}

/**
 * A crash systemd restarted (NRestarts moved) counts towards sbd's own fuse (crash-count.ts): when
 * it blows, the spawn is quarantined first (so its unit's stop is not told as an exit), told, and
 * its unit stopped, which cancels the restart systemd queued.
 */
function countRestarts(kit: RunnerKit, record: MonitorRecord, info: UnitInfo | undefined): void {
  const boot = bootId();
  if (boot === undefined || info?.nRestarts === undefined) return; // no boot id: monotonic times could not be kept
  const counted = countCrashes(record.crashes, info.nRestarts, kit.host.monotonicMs(), boot);
  if (counted === undefined) return;
  if (!counted.blown) return kit.save({ ...record, crashes: counted.next });
  const reason = `it crashed ${SLOW_CRASH_LOOP.crashes} times within ${SLOW_CRASH_LOOP.withinMs / 60_000} min, each time restarted by systemd: sbd stopped it; sbctl monitor recover decides`;
  // the last crash's receipt, unless systemd has started the next run already (ExecMainCode 0)
  const ended = info.execMainCode !== undefined && info.execMainCode > 0;
  kit.save({ ...record, crashes: counted.next, lifecycle: 'quarantined', reason, ...(ended ? { exit: exitOf(info) } : {}) });
  kit.tell(record, 'quarantined', reason);
  if (record.unit) {
    const unit = record.unit.name;
    void kit.host.stopUnit(unit).catch((err: unknown) => kit.host.log('warn', "stopping a crash-looping monitor's unit failed", { monitor: record.id, unit, err }));
  }
}

export const spawnRunner: Runner = {
  begin: (kit, record, session) => startUnit(kit, record, session.slice, session.memoryHigh),
  resume(kit, record) {
    // its process lives on in its unit: follow its output from where sbd stopped reading
    kit.follow(record.id, spawnOutput(kit.host, record.id));
    kit.catchUp(spawnOutput(kit.host, record.id));
  },
  async stop(kit, record) {
    if (!record.unit) return;
    kit.unfollow(spawnOutput(kit.host, record.id));
    await kit.host.stopUnit(record.unit.name).catch((err: unknown) => kit.host.log('warn', 'stopping a monitor unit failed', { monitor: record.id, unit: record.unit?.name, err }));
  },
  onUnit(kit, record, info) {
    // systemd's RuntimeMaxSec is a failure to Restart=on-failure: a restart it queued is cancelled by the stop
    const timedOut = info?.result === 'timeout' && record.spec.expiresAt !== undefined;
    if (running(info) && !timedOut) return countRestarts(kit, record, info);
    const ending = unitEnding(info);
    kit.save({ ...record, ...ending });
    kit.tell(record, ending.lifecycle === 'quarantined' ? 'quarantined' : ending.lifecycle === 'expired' ? 'expired' : 'exit', ending.reason);
    if (timedOut && record.unit) void kit.host.stopUnit(record.unit.name).catch(() => undefined);
  },
  async restart(kit, record) {
    const session = kit.host.session(record.sessionId);
    if (!session) throw new MonitorRequestError(`its session "${record.sessionId}" has ended: start a new monitor in a live session`);
    // a failed transient unit keeps its name (and its start-limit count) until reset: then systemd
    // unloads it. One still restarting (quarantined by sbd's own count, sbd killed before its stop)
    // is stopped first: systemd refuses a new unit of a name still loaded.
    if (record.unit) {
      const unit = record.unit.name;
      const now = await kit.host.getUnit(unit).catch(() => undefined);
      if (now && now.activeState !== 'inactive' && now.activeState !== 'failed') {
        // (a stop that fails leaves the name taken: the start below then fails with systemd's word, and the record says so)
        await kit.host.stopUnit(unit).catch((err: unknown) => kit.host.log('warn', "stopping a quarantined monitor's unit before its fresh start failed", { monitor: record.id, unit, err }));
      }
      await kit.host.resetFailedUnit(unit).catch(() => undefined);
    }
    await startUnit(kit, record, session.slice, session.memoryHigh);
  },
  async discard(kit, record) {
    if (record.unit) await kit.host.resetFailedUnit(record.unit.name).catch(() => undefined);
  },
};

/** Start a quarantined spawn's unit again (recover approve): a fresh unit of the same name. */
export const restartSpawn = startUnit;
