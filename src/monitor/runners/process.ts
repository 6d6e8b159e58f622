/**
 * A process monitor (issue 13): a local process found by its pid file or by its name (its comm,
 * exactly as /proc/PID/comm shows it), observed and never owned: sbd holds a pidfd on it, which
 * tells its exit, and never signals it. The pid is trusted only once verified: the pidfd is
 * opened first, then /proc/PID/stat and status are read (the process's start time and uid; ours
 * only) and the pidfd is checked not to have exited, so what was read is the pidfd's process and
 * not a later one with the same number. After a restart of sbd the monitor resumes only when the
 * recorded pid is still the same process (same start time); else it says the process is gone.
 */
import * as fs from 'node:fs';
import { Pidfd } from '../../native';
import { ownProcesses } from '../../proc/scan';
import { processGone, readProcess } from '../../proc/table';
import { MonitorRequestError, type Runner, type RunnerKit } from '../runner';
import type { MonitorRecord } from '../store';
import { perKit } from './state';

/** /proc/PID/comm is the name cut to this many bytes (TASK_COMM_LEN - 1). */
export const COMM_MAX = 15;

/** The pids of `procs` named exactly `name` (pure). */
export const namedExactly = (procs: ReadonlyArray<{ pid: number; comm: string }>, name: string): number[] =>
  procs.filter((p) => p.comm === name).map((p) => p.pid).sort((a, b) => a - b);

/** The pid a pid file holds (pure): one decimal number, blanks around it allowed. */
export function pidOfFile(text: string, file: string): number {
  const t = text.trim();
  if (!/^\d{1,10}$/.test(t) || Number(t) <= 0) throw new MonitorRequestError(`the pid file ${file} holds no pid (one decimal number expected)`);
  return Number(t);
}

export interface Observed {
  pid: number;
  startTicks: number;
  comm: string;
}

/** A verified handle on `pid`, or why it cannot be trusted. */
function verify(pid: number): { fd: Pidfd; seen: Observed } | { why: string } {
  let fd: Pidfd;
  try {
    fd = Pidfd.open(pid);
  } catch (err) {
    if (processGone(err)) return { why: `no process ${pid} is running` };
    return { why: `cannot open a pidfd on process ${pid}: ${(err as Error).message}` };
  }
  const info = readProcess(pid);
  if (info === undefined || fd.hasExited()) {
    fd.close();
    return { why: `process ${pid} has exited` };
  }
  if (info.uid !== process.getuid?.()) {
    fd.close();
    return { why: `process ${pid} (${info.comm}) is not yours (uid ${info.uid}): sbd observes only its own user's processes` };
  }
  return { fd, seen: { pid, startTicks: info.startTicks, comm: info.comm } };
}

/** The pid the spec names: its pid file's, or the one process of ours with that name. */
function targetPid(record: MonitorRecord): number {
  const spec = record.spec;
  if (spec.type !== 'process') throw new Error('not a process monitor');
  if ('pidFile' in spec) {
    let text: string;
    try {
      text = fs.readFileSync(spec.pidFile, 'utf8').slice(0, 64);
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      throw new MonitorRequestError(code === 'ENOENT' ? `the pid file ${spec.pidFile} does not exist (the process has not written it, or is not running)` : `cannot read the pid file ${spec.pidFile} (${code ?? 'error'})`);
    }
    return pidOfFile(text, spec.pidFile);
  }
  const pids = namedExactly(ownProcesses(), spec.match);
  const hint = spec.match.length > COMM_MAX ? ` (a process name has at most ${COMM_MAX} characters, as /proc/PID/comm shows it)` : '';
  if (pids.length === 0) throw new MonitorRequestError(`no process of yours is named "${spec.match}"${hint}`);
  if (pids.length > 1) throw new MonitorRequestError(`"${spec.match}" names ${pids.length} processes of yours (pids ${pids.join(', ')}): give the one meant with --pid-file, or a name only it has`);
  return pids[0] as number;
}

const handles = perKit<Pidfd>();

function observe(kit: RunnerKit, id: string, fd: Pidfd, seen: Observed): void {
  handles(kit).set(id, fd);
  fd.exited.then(() => {
    if (handles(kit).get(id) !== fd) return; // stopped meanwhile
    handles(kit).delete(id);
    fd.close();
    const r = kit.get(id);
    if (!r || r.lifecycle !== 'running') return;
    const reason = `process ${seen.pid} (${seen.comm}) exited`;
    kit.save({ ...r, lifecycle: 'stopped', reason });
    kit.tell(r, 'exit', reason);
  }).catch((err: unknown) => kit.host.log('warn', 'telling a process monitor\'s exit failed', { monitor: id, err }));
}

function release(kit: RunnerKit, id: string): void {
  const fd = handles(kit).get(id);
  handles(kit).delete(id);
  fd?.close(); // never a signal: the process is observed, not owned
}

export const processRunner: Runner = {
  async begin(kit, record) {
    let checked: ReturnType<typeof verify>;
    try {
      checked = verify(targetPid(record));
    } catch (err) {
      kit.save({ ...record, lifecycle: 'gone', reason: (err as Error).message });
      throw err;
    }
    if ('why' in checked) {
      kit.save({ ...record, lifecycle: 'gone', reason: checked.why });
      throw new MonitorRequestError(checked.why);
    }
    kit.save({ ...record, process: checked.seen });
    observe(kit, record.id, checked.fd, checked.seen);
  },
  resume(kit, record) {
    const was = record.process;
    const checked = was ? verify(was.pid) : { why: 'no process on record' };
    if (was && !('why' in checked) && checked.seen.startTicks === was.startTicks) {
      observe(kit, record.id, checked.fd, was);
      return;
    }
    if (!('why' in checked)) checked.fd.close(); // the pid is another process's now
    const reason = was ? `process ${was.pid} (${was.comm}) is gone: it ended while sbd was away` : 'no process on record';
    kit.save({ ...record, lifecycle: 'gone', reason });
    kit.tell(record, 'gone', reason);
  },
  async stop(kit, record) {
    release(kit, record.id);
  },
  close(kit) {
    for (const id of [...handles(kit).keys()]) release(kit, id);
  },
};
