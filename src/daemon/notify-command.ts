/**
 * The optional notify command of the config: an argv (never a shell string), run once per
 * incident with the incident as JSON on its stdin.
 *
 * - Its own session and process group (spawned detached: setsid), and a marker in its
 *   environment; the whole group gets notifyTimeoutS in all, then every member is SIGKILLed,
 *   a grandchild and a command that ended but left a child behind too.
 * - Its exit status and the first KiB of its output (stdout and stderr as they came) are
 *   logged; never its argv (it may carry tokens), only the program's name.
 * - At most MAX_NOTIFY_RUNNING run at once; an incident beyond that is dropped and counted,
 *   and the count is logged when a run ends.
 *
 * Killing the group through pidfds (no kill(-pgid): signals go only through pidfds, to
 * processes of ours whose identity was checked): the members are read from /proc, each one a
 * process of our uid whose session id is the command's pid (setsid made it pid = sid = pgid;
 * the session survives a member's setpgid, as `timeout` does, where the process group would
 * not), or which carries this run's marker in its environment (a member that called setsid
 * itself). While a member lives, the kernel keeps the leader's pid number allocated as their
 * session id, so no stranger can carry it. Each member's pidfd is taken and its start time
 * checked before SIGKILL; a member that forked between the read and the kill is found by the
 * next round (a killed process cannot fork any more), so rounds repeat until one finds no one.
 * What this cannot catch: a member that both left the session and cleared its environment.
 * (A cgroup of its own would catch everything, but sbd cannot make one: its unit's cgroup is
 * its user manager's, and a transient unit per incident would be D-Bus work in a storm.)
 */
import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { holdProcesses } from '../actions/terminate';
import { environValue, parseStat } from '../proc/stat';
import { type ProcInfo, readProcess } from '../proc/table';
import type { Incident } from './incidents';
import type { Logger } from './log';

/**
 * How many notify commands may run at once. Each is a fork under sbd's own MemoryHigh=256M
 * (units/sbd.service): four node or python notifiers (~50 MB each) stay inside it, and a storm
 * (50 sessions standing still at once) cannot fork 50 of them.
 */
export const MAX_NOTIFY_RUNNING = 4;

/** How much of its output (stdout and stderr together) is kept for the log: enough for an error message. */
export const OUTPUT_KEPT_BYTES = 1024;

/** The environment variable that marks every process of one run (found again after setsid). */
export const NOTIFY_MARKER = 'SESSIONBRAKE_NOTIFY';

/** Kill rounds at the time-out: each finds what forked during the last; a few are always enough. */
const MAX_KILL_ROUNDS = 10;

/** What the kill needs of a process from /proc. */
export interface GroupCandidate {
  pid: number;
  session: number;
  state: string;
  marker: string | undefined;
}

/** The members of a run: in the session `sid`, or carrying `marker`; never a zombie (it is dead already). Pure. */
export function groupMembers<T extends GroupCandidate>(procs: readonly T[], sid: number, marker: string): T[] {
  return procs.filter((p) => p.state !== 'Z' && p.state !== 'X' && (p.session === sid || p.marker === marker));
}

/** Our own processes (this process left out) as kill candidates, read from /proc. */
function candidates(procRoot = '/proc'): GroupCandidate[] {
  const uid = process.getuid?.();
  const out: GroupCandidate[] = [];
  for (const name of fs.readdirSync(procRoot)) {
    if (!/^\d+$/.test(name) || Number(name) === process.pid) continue;
    const dir = path.join(procRoot, name);
    try {
      if (fs.statSync(dir).uid !== uid) continue;
      const s = parseStat(fs.readFileSync(path.join(dir, 'stat'), 'utf8'), path.join(dir, 'stat'));
      out.push({ pid: s.pid, session: s.session, state: s.state, marker: environValue(fs.readFileSync(path.join(dir, 'environ')), NOTIFY_MARKER) });
    } catch {
      /* exited meanwhile */
    }
  }
  return out;
}

/**
 * SIGKILL every member of the run through pidfds (start time checked), round after round until
 * a round finds no member not killed already; returns how many were killed.
 */
function killGroup(sid: number, marker: string): number {
  const done = new Set<string>();
  for (let round = 0; round < MAX_KILL_ROUNDS; round++) {
    const members = groupMembers(candidates(), sid, marker)
      .map((m) => readProcess(m.pid))
      .filter((p): p is ProcInfo => p !== undefined && !done.has(`${p.pid}:${p.startTicks}`));
    if (members.length === 0) break;
    const startOf = new Map(members.map((p) => [p.pid, p.startTicks]));
    for (const h of holdProcesses(members.map((p) => p.pid), members).handles) {
      try {
        h.signal('SIGKILL');
        done.add(`${h.pid}:${startOf.get(h.pid) ?? ''}`);
      } catch {
        /* ESRCH: it exited meanwhile */
      } finally {
        h.close();
      }
    }
  }
  return done.size;
}

/** Is anything of the run left? */
function groupLeft(sid: number, marker: string): boolean {
  return groupMembers(candidates(), sid, marker).length > 0;
}

export class NotifyCommand {
  private running = 0;
  private dropped = 0;
  private seq = 0;
  private readonly idle: Array<() => void> = [];

  constructor(
    private readonly argv: readonly string[],
    private readonly timeoutS: number,
    private readonly log: Logger,
    private readonly maxRunning = MAX_NOTIFY_RUNNING,
    /** Told once per failed run (could not start, exited non-zero, timed out) and per dropped incident: sbd's metrics count them. */
    private readonly onFailure: () => void = () => undefined,
  ) {}

  /** Run the command for `incident`, or drop it (counted) when maxRunning already run. */
  run(incident: Incident): void {
    const [cmd, ...args] = this.argv;
    if (cmd === undefined) return;
    if (this.running >= this.maxRunning) {
      this.dropped++;
      this.onFailure();
      return;
    }
    this.running++;
    const marker = `${process.pid}-${++this.seq}`;
    const program = path.basename(cmd);
    const fields = { program, incident: incident.type, unit: incident.unit };
    const startedAt = performance.now();
    const child = spawn(cmd, args, { stdio: ['pipe', 'pipe', 'pipe'], detached: true, env: { ...process.env, [NOTIFY_MARKER]: marker } });
    const chunks: Buffer[] = [];
    let kept = 0;
    let truncated = false;
    const keep = (d: Buffer): void => {
      if (kept >= OUTPUT_KEPT_BYTES) {
        truncated = true;
        return;
      }
      const part = d.subarray(0, OUTPUT_KEPT_BYTES - kept);
      if (part.length < d.length) truncated = true;
      chunks.push(part);
      kept += part.length;
    };
    child.stdout.on('data', keep);
    child.stderr.on('data', keep);
    child.stdin.on('error', () => {}); // it may exit without reading
    child.stdin.end(`${JSON.stringify(incident)}\n`);

    let timedOut = false;
    let killed = 0;
    let closed: { code: number | null; signal: NodeJS.Signals | null } | undefined;
    let finished = false;
    const finish = (err?: NodeJS.ErrnoException): void => {
      if (finished) return;
      finished = true;
      clearTimeout(timer);
      this.running--;
      const output = Buffer.concat(chunks).toString('utf8');
      const line = { ...fields, exitCode: closed?.code ?? null, signal: closed?.signal ?? null, timedOut, killed, durationMs: Math.round(performance.now() - startedAt), output, outputTruncated: truncated };
      if (err || timedOut || closed?.code !== 0) this.onFailure();
      if (err) this.log.warn({ event: 'notify-failed', ...line, errCode: err.code ?? null, err: err.message }, `the notify command ${program} could not run`);
      else if (timedOut || closed?.code !== 0) this.log.warn({ event: 'notify-failed', ...line }, `the notify command ${program} ${timedOut ? `did not end within ${this.timeoutS} s: its process group was killed` : 'failed'}`);
      else this.log.info({ event: 'notify-done', ...line }, `the notify command ${program} ran`);
      if (this.dropped > 0) {
        this.log.warn({ event: 'notify-dropped', dropped: this.dropped, maxRunning: this.maxRunning }, `${this.dropped} incident${this.dropped === 1 ? ' was' : 's were'} not sent to the notify command: ${this.maxRunning} were running already`);
        this.dropped = 0;
      }
      if (this.running === 0) for (const resolve of this.idle.splice(0)) resolve();
    };
    const timer = setTimeout(() => {
      timedOut = true;
      if (child.pid !== undefined) killed = killGroup(child.pid, marker);
      // A member that escaped both ways may still hold the pipes: stop reading them.
      child.stdout.destroy();
      child.stderr.destroy();
      if (closed) finish();
    }, this.timeoutS * 1000);
    child.on('error', (err: NodeJS.ErrnoException) => finish(err));
    child.on('close', (code, signal) => {
      closed = { code, signal };
      // Ended within its time: done, unless it left members behind: they get the rest of the time-out.
      if (timedOut || child.pid === undefined || !groupLeft(child.pid, marker)) finish();
    });
  }

  /** Resolves once no run is in flight. */
  settled(): Promise<void> {
    return this.running === 0 ? Promise.resolve() : new Promise((resolve) => this.idle.push(resolve));
  }
}
