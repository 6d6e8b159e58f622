/**
 * /proc/PID/stat of processes watched for their whole life (the freeze check's agents, once a
 * minute each), each held open and read again from its start (util/read-again.ts): one syscall
 * instead of readFileSync's five (open, fstat, read, read, close). At 1,000 idle
 * sessions the freeze check was the larger part of sbd's CPU (bench/RESULTS.md, issue 15 item 4).
 *
 * An fd names the process it was opened for: once that one has exited the read fails ESRCH, even
 * when its pid names another process by then, so a held fd never reads a stranger's figures.
 */
import * as fs from 'node:fs';
import { readAgain } from '../util/read-again';
import { type ProcStat, parseStat } from './stat';
import { processGone } from './table';

export class HeldStats {
  private readonly held = new Map<string, { pid: number; fd: number }>();

  constructor(private readonly procRoot = '/proc') {}

  /**
   * The stat of `pid`, held under `key` (a session's unit): undefined when that process has
   * exited. A new pid under the same key closes the old fd first. Any other failure (EMFILE: out
   * of open files) is thrown, naming the syscall and the file, with nothing left open.
   */
  read(key: string, pid: number): ProcStat | undefined {
    const file = `${this.procRoot}/${pid}/stat`;
    let h = this.held.get(key);
    if (h !== undefined && h.pid !== pid) {
      this.release(key);
      h = undefined;
    }
    if (h === undefined) {
      let fd: number;
      try {
        fd = fs.openSync(file, 'r');
      } catch (err) {
        if (processGone(err)) return undefined;
        throw err;
      }
      h = { pid, fd };
      this.held.set(key, h);
    }
    let text: string;
    try {
      text = readAgain(h.fd, 'utf8'); // a process's name may be UTF-8
    } catch (err) {
      if (!processGone(err)) throw err;
      this.release(key); // exited: its fd names nothing any more
      return undefined;
    }
    return parseStat(text, file);
  }

  /** Close the fd held under `key` (its session ended); nothing when none is. */
  release(key: string): void {
    const h = this.held.get(key);
    if (h === undefined) return;
    this.held.delete(key);
    try {
      fs.closeSync(h.fd);
    } catch {
      /* already closed: nothing held */
    }
  }

  releaseAll(): void {
    for (const key of [...this.held.keys()]) this.release(key);
  }

  /** How many fds are held. */
  get size(): number {
    return this.held.size;
  }
}
