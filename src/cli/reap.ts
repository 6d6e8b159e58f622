/**
 * `sbctl reap --session S | --checkout PATH` and `sbctl holders PATH`: stop what a session left
 * running, or what works inside a checkout; or only list the latter. Only this user's processes
 * are ever looked at or signalled, through pidfds. Runs in sbctl itself: sbd is not needed.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { type ReapRow, mergeTargets, reap, spareAncestors } from '../actions/reap';
import { ownAncestors } from '../proc/ancestors';
import { cgroupDir } from '../cgroup/read';
import { ageAndCpu, holdersOf, markedWith, uptimeS } from '../proc/scan';
import { readCgroupProcesses, readProcess } from '../proc/table';
import { readRecord, recordsDir } from '../sessions/record';
import { sessionId } from '../systemd/names';
import type { UserManager } from '../systemd/types';
import { formatDuration } from '../util/duration';
import { formatSize } from '../util/size';
import { UsageError } from './errors';
import { table } from './table';

export function formatReap(rows: readonly ReapRow[]): string {
  const outcome = (r: ReapRow): string => (r.outcome === 'spared' ? `spared: ${r.why ?? ''}` : r.outcome);
  return table([['PID', 'PROGRAM', 'CPU', 'AGE', 'RSS', 'WHAT BECAME OF IT'], ...rows.map((r) => [String(r.pid), r.program, formatDuration(r.cpuS), formatDuration(r.ageS), formatSize(r.rssBytes), outcome(r)])]);
}

/** A checkout path that exists, resolved (symlinks followed) so /proc's links compare. */
export function checkoutPath(p: string): string {
  try {
    return fs.realpathSync(p);
  } catch {
    throw new UsageError(`${p}: no such directory: name an existing checkout`);
  }
}

/**
 * Why reaping inside `dir` (resolved) is refused, or undefined when it may go ahead: `/` and a
 * home directory (or a directory holding one) are where every shell, editor and service of the
 * user works, never one checkout. `homes`: the home directories, resolved. Pure.
 */
export function checkoutRefusal(dir: string, homes: readonly string[]): string | undefined {
  if (dir === '/') return 'that is the root directory: every process of yours works under it';
  for (const home of homes) {
    if (dir === home) return 'that is your home directory: your shells, editors and services work under it';
    if (home.startsWith(dir.endsWith('/') ? dir : `${dir}/`)) return `it holds your home directory ${home}: your shells, editors and services work under it`;
  }
  return undefined;
}

/** The user's home directories ($HOME and the password database's), resolved where they exist. */
function homeDirs(env: NodeJS.ProcessEnv): string[] {
  const homes = new Set<string>();
  let fromPasswd: string | undefined;
  try {
    fromPasswd = os.userInfo().homedir;
  } catch {
    /* no entry in the password database: $HOME alone */
  }
  for (const h of [env.HOME, fromPasswd]) {
    if (!h) continue;
    try {
      homes.add(fs.realpathSync(h));
    } catch {
      homes.add(path.resolve(h));
    }
  }
  return [...homes];
}

/** What session S left: its scope's processes and every marked process of ours, but a live agent. */
export async function sessionLeftovers(manager: UserManager, session: string, env: NodeJS.ProcessEnv) {
  const unit = session.endsWith('.scope') || session.endsWith('.service') ? session : `${session}.scope`;
  const id = sessionId(unit);
  const info = await manager.getUnit(unit);
  const inScope = info && info.controlGroup !== '' ? readCgroupProcesses(cgroupDir(info.controlGroup)) : [];
  const dir = recordsDir(env);
  const record = dir ? readRecord(dir, unit) : undefined;
  const agent = record && readProcess(record.agentPid)?.startTicks === record.agentStartTicks ? record.agentPid : undefined;
  return mergeTargets([inScope, markedWith(id)], new Set(agent === undefined ? [] : [agent]));
}

export async function runReap(
  target: { session?: string; checkout?: string },
  opts: { dryRun: boolean; timeoutS: number; json: boolean },
  manager: () => Promise<UserManager>,
  env: NodeJS.ProcessEnv,
  say: (s: string) => void,
): Promise<number> {
  if ((target.session === undefined) === (target.checkout === undefined)) {
    throw new UsageError('sbctl reap: give either --session NAME or --checkout PATH');
  }
  let targets;
  let what: string;
  if (target.checkout !== undefined) {
    const dir = checkoutPath(target.checkout);
    const refusal = checkoutRefusal(dir, homeDirs(env));
    if (refusal !== undefined) throw new UsageError(`sbctl reap --checkout ${dir}: refused: ${refusal}; name the checkout itself`);
    targets = holdersOf(dir).map((h) => h.proc);
    what = `working inside ${dir}`;
  } else {
    const m = await manager();
    try {
      targets = await sessionLeftovers(m, target.session as string, env);
    } finally {
      m.close();
    }
    what = `left by session ${target.session as string}`;
  }
  // sbctl's own process is never among the targets (ownProcesses leaves it out); its caller and
  // the caller's ancestors are spared here, and said so.
  const split = spareAncestors(targets, ownAncestors());
  if (split.targets.length === 0 && split.spared.length === 0) {
    say(opts.json ? '[]' : `nothing to stop: no process of yours ${what}`);
    return 0;
  }
  const rows = await reap(split.targets, opts.timeoutS * 1000, opts.dryRun, split.spared);
  if (opts.json) say(JSON.stringify(rows, null, 2));
  else {
    const n = split.targets.length;
    const head = n === 0 ? `nothing to stop: the only processes of yours ${what} are sbctl's caller and its ancestors` : `${opts.dryRun ? 'would stop' : 'stopped'} ${n} process${n === 1 ? '' : 'es'} ${what}`;
    say(`${head}:\n${formatReap(rows)}`);
    if (split.spared.length > 0) say(`spared ${split.spared.length}: sbctl never signals the shell that runs it, nor what runs that shell`);
  }
  return rows.some((r) => r.outcome === 'survived') ? 1 : 0;
}

/** `sbctl holders PATH`: exit 1 when something works inside, 0 when free. */
export function runHolders(pathArg: string, json: boolean, say: (s: string) => void): number {
  const dir = checkoutPath(pathArg);
  const now = uptimeS();
  const holders = holdersOf(dir).map((h) => ({ pid: h.proc.pid, program: h.proc.comm, ...ageAndCpu(h.proc, now), how: h.how, session: h.session ?? null }));
  if (json) say(JSON.stringify({ path: dir, held: holders.length > 0, holders }, null, 2));
  else if (holders.length === 0) say(`${dir}: free: no process of yours works inside`);
  else {
    say(`${dir}: held by ${holders.length} process${holders.length === 1 ? '' : 'es'}:`);
    say(table([['PID', 'PROGRAM', 'CPU', 'AGE', 'HOW', 'SESSION'], ...holders.map((h) => [String(h.pid), h.program, formatDuration(h.cpuS), formatDuration(h.ageS), h.how, h.session ?? '-'])]));
    say(`stop them with: sbctl reap --checkout ${dir}`);
  }
  return holders.length > 0 ? 1 : 0;
}
