/**
 * `sbctl run -- CMD ARGS…`: CMD in a new scope of the sessions slice, on this terminal, with
 * SESSIONBRAKE_SESSION in its environment; exits with CMD's exit code. Needs only systemd, not sbd.
 *
 * CMD is started through the exec gate (native/gate), which waits on fd 3 until the scope
 * exists: CMD and all it starts are in the scope from their first instruction.
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { constants } from 'node:os';
import { Pidfd, execGatePath } from '../native';
import { readProcess } from '../proc/table';
import { recordsDir, removeRecord, writeRecord } from '../sessions/record';
import { refusedOomPolicy } from '../systemd/features';
import { isValidUnitName } from '../systemd/names';
import type { UserManager } from '../systemd/types';
import { UsageError } from './errors';

export interface RunOptions {
  name?: string;
  slice: string;
  memoryHigh?: number;
  memoryMax?: number;
  swapMax?: number;
  heartbeat?: string;
  /** false: leftovers are told about, not stopped. */
  reap?: boolean;
  argv: string[];
}

/** A session name from the command: "npm" -> "npm-3fa2c1". */
export function defaultSessionName(cmd: string, random: string): string {
  const base = path.basename(cmd).replace(/[^A-Za-z0-9_.-]/g, '_').slice(0, 40) || 'session';
  return `${base}-${random}`;
}

const ACTIVE = new Set(['active', 'activating', 'deactivating', 'reloading']);
/** Signals sent to sbctl itself that the command should get instead. */
const FORWARDED: NodeJS.Signals[] = ['SIGTERM', 'SIGHUP'];
/** Signals the terminal sends to the whole foreground group: the command gets them itself. */
const IGNORED: NodeJS.Signals[] = ['SIGINT', 'SIGQUIT'];

export async function runSession(opts: RunOptions, manager: UserManager, env: NodeJS.ProcessEnv): Promise<number> {
  try {
    return await run(opts, manager, env);
  } finally {
    manager.close(); // on every path: an open bus would keep sbctl from exiting
  }
}

async function run(opts: RunOptions, manager: UserManager, env: NodeJS.ProcessEnv): Promise<number> {
  const [cmd, ...args] = opts.argv;
  if (cmd === undefined) throw new UsageError('sbctl run: no command given: sbctl run [options] -- CMD [ARGS...]');
  const name = opts.name ?? defaultSessionName(cmd, Math.random().toString(16).slice(2, 8));
  const unit = `${name}.scope`;
  if (!isValidUnitName(unit)) {
    throw new UsageError(`sbctl run: --name ${JSON.stringify(name)} is not usable as a unit name: use letters, digits, ":", "_", ".", "-" (at most 249)`);
  }
  const existing = await manager.getUnit(unit);
  if (existing && ACTIVE.has(existing.activeState)) {
    throw new UsageError(`sbctl run: a session named "${name}" exists already (${unit}, ${existing.activeState}): choose another --name`);
  }
  const heartbeat = opts.heartbeat === undefined ? undefined : path.resolve(opts.heartbeat);
  if (!fs.existsSync(execGatePath)) {
    throw new Error(`sbctl run: the exec gate ${execGatePath} is missing: rebuild with \`npm run build:native\``);
  }

  const child = spawn(execGatePath, [cmd, ...args], {
    stdio: ['inherit', 'inherit', 'inherit', 'pipe'],
    env: { ...env, SESSIONBRAKE_SESSION: name },
  });
  await once(child, 'spawn');
  const pid = child.pid as number;
  const gate = child.stdio[3] as NodeJS.WritableStream;
  const exited = new Promise<[number | null, NodeJS.Signals | null]>((resolve) => child.once('exit', (code, sig) => resolve([code, sig])));

  // The record first: sbd may adopt the scope the moment it exists, and must find it then.
  const dir = recordsDir(env);
  const startTicks = readProcess(pid)?.startTicks ?? 0;
  if (dir) writeRecord(dir, { unit, id: name, agentPid: pid, agentStartTicks: startTicks, createdAtMs: Date.now(), ...(heartbeat ? { heartbeat } : {}), ...(opts.reap === false ? { reap: false } : {}) });
  const scope = {
    name: unit,
    slice: opts.slice,
    pids: [pid],
    description: `sessionbrake session ${name}`,
    ...(opts.memoryHigh !== undefined ? { memoryHigh: opts.memoryHigh } : {}),
    ...(opts.memoryMax !== undefined ? { memoryMax: opts.memoryMax } : {}),
    ...(opts.swapMax !== undefined ? { memorySwapMax: opts.swapMax } : {}),
  };
  try {
    // OOMPolicy=continue: a kernel OOM kill takes one process, not the whole session. A systemd
    // whose scopes lack it refuses the property: then the scope starts without (sbctl doctor says so).
    try {
      await manager.startScope({ ...scope, oomPolicy: 'continue' });
    } catch (err) {
      if (!refusedOomPolicy(err)) throw err;
      process.stderr.write(`sbctl run: this systemd refuses OOMPolicy= on scopes: a kernel OOM kill would stop the whole session (see sbctl doctor)\n`);
      await manager.startScope(scope);
    }
  } catch (err) {
    if (dir) removeRecord(dir, unit);
    gate.end(); // EOF without a byte: the gate exits 125 and runs nothing
    await exited;
    throw err;
  } finally {
    manager.close(); // nothing more to ask of systemd; do not hold the bus for the session's life
  }

  const pidfd = Pidfd.open(pid);
  const forward = (sig: NodeJS.Signals): void => {
    try {
      pidfd.signal(sig);
    } catch {
      /* it has exited already */
    }
  };
  for (const s of FORWARDED) process.on(s, forward);
  for (const s of IGNORED) process.on(s, () => {});
  gate.end(Buffer.from([1])); // go

  const [code, sig] = await exited;
  pidfd.close();
  // The record stays while the scope lives (sbd removes it): it says who the agent was, so that
  // what the agent left is reaped even if sbd adopts the session only after the agent is gone.
  return sig !== null ? 128 + (constants.signals[sig] ?? 0) : (code ?? 1);
}
