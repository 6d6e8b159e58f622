/**
 * Kernel OOM kills in a session (pure): did the cgroup's `oom_kill` counter move, which process
 * did the kernel log name, and the sentence that tells it. The reading is in ./watch.ts.
 */
import { formatSize } from '../util/size';

/** One OOM kill as the kernel logged it (/dev/kmsg). */
export interface LoggedKill {
  pid: number;
  comm: string;
  /** The cgroup whose limit was hit ("/user.slice/.../a.scope"); "/" for the machine's own OOM. */
  oomMemcg: string;
  /** The killed task's cgroup. */
  taskMemcg: string;
  /** anon-rss of the killed process, when its "Killed process" line was found. */
  anonRssBytes?: number;
  /** Kernel timestamp, µs since boot. */
  atUs: number;
}

/** A /dev/kmsg record: "prio,seq,usec,flags;text" (continuation lines start with a space). */
export function parseKmsgRecord(record: string): { atUs: number; text: string } | undefined {
  const semi = record.indexOf(';');
  if (semi < 0) return undefined;
  const fields = record.slice(0, semi).split(',');
  const atUs = Number(fields[2]);
  if (fields.length < 4 || !Number.isInteger(atUs)) return undefined;
  return { atUs, text: (record.slice(semi + 1).split('\n')[0] ?? '').trimEnd() };
}

// mm/oom_kill.c dump_oom_summary(), one line:
//   oom-kill:constraint=CONSTRAINT_MEMCG,...,oom_memcg=/a/b.scope,task_memcg=/a/b.scope,task=stress-ng,pid=812,uid=1000
// (the machine's own OOM has oom_memcg=/). A comm may contain commas: pid and uid end the line.
const SUMMARY = /^oom-kill:.*,oom_memcg=(.*?),task_memcg=(.*?),task=(.*),pid=(\d+),uid=(\d+)$/;
// __oom_kill_process(): "Memory cgroup out of memory: Killed process 812 (stress-ng) total-vm:..kB, anon-rss:..kB, ..."
const KILLED = /Killed process (\d+) \((.*)\) total-vm:\d+kB, anon-rss:(\d+)kB/;

/**
 * The kills logged for tasks of `controlGroup`, oldest first, from /dev/kmsg records (a summary
 * line, then its "Killed process" line with the same pid).
 */
export function killsIn(records: readonly string[], controlGroup: string): LoggedKill[] {
  const kills: LoggedKill[] = [];
  for (const raw of records) {
    const r = parseKmsgRecord(raw);
    if (!r) continue;
    const s = SUMMARY.exec(r.text);
    if (s) {
      if (s[2] === controlGroup) kills.push({ oomMemcg: s[1] as string, taskMemcg: s[2], comm: s[3] as string, pid: Number(s[4]), atUs: r.atUs });
      continue;
    }
    const k = KILLED.exec(r.text);
    const last = kills[kills.length - 1];
    if (k && last && last.pid === Number(k[1]) && last.anonRssBytes === undefined) last.anonRssBytes = Number(k[3]) * 1024;
  }
  return kills;
}

/** How many kills since `before` (a lower count means a new cgroup behind the same name: count from zero). */
export function newKills(before: number, now: number): number {
  return now >= before ? now - before : now;
}

/** The figures of the cgroup read right after the counter moved (undefined: could not be read). */
export interface OomFigures {
  currentBytes?: number;
  highBytes?: number;
  maxBytes?: number;
  peakBytes?: number;
  /** memory.events (this cgroup and below) and memory.events.local counters. */
  events?: Record<string, number>;
  eventsLocal?: Record<string, number>;
}

/** Where the kernel's own account is when sbd could not read it. */
export const KERNEL_LOG_HINT = "the kernel log names it: as root, journalctl -k -g 'Killed process' (or dmesg)";

/** The incident's sentence. Never a command line: the kernel's comm only. */
export function describeKills(count: number, kills: readonly LoggedKill[], f: OomFigures, kmsgProblem: string | undefined): string {
  const size = (b: number | undefined): string => (b === undefined ? '?' : formatSize(b));
  const who = kills.length > 0
    ? kills.map((k) => `${k.comm} (pid ${k.pid}${k.anonRssBytes !== undefined ? `, ${formatSize(k.anonRssBytes)} anon` : ''})`).join(', ')
    : `${count === 1 ? 'one process' : `${count} processes`}; which: ${KERNEL_LOG_HINT}${kmsgProblem ? ` (sbd cannot read it: ${kmsgProblem})` : ''}`;
  const limit = kills[0] === undefined ? '' : kills[0].oomMemcg === '/' ? ' by the machine running out of memory' : kills[0].oomMemcg === kills[0].taskMemcg ? " at the session's MemoryMax" : ` at the limit of ${kills[0].oomMemcg}`;
  // systemd 252 stops the scope right after a kill: its files may be gone by the time sbd reads them
  if (Object.keys(f).length === 0) return `kernel OOM kill${limit}: ${who}; the cgroup was gone before sbd could read its figures`;
  return `kernel OOM kill${limit}: ${who}; memory.current ${size(f.currentBytes)}, high ${size(f.highBytes)}, max ${size(f.maxBytes)}, peak ${size(f.peakBytes)}, oom_kill ${f.events?.oom_kill ?? '?'}`;
}
