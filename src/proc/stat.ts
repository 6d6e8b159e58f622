/** Pure parsers for /proc/<pid>/stat and /proc/<pid>/status (proc(5)). */

export class ProcFormatError extends Error {
  constructor(file: string, detail: string) {
    super(`${file}: unexpected content: ${detail}`);
    this.name = 'ProcFormatError';
  }
}

export interface ProcStat {
  pid: number;
  /** The command name, up to 15 bytes; may hold spaces and parentheses. */
  comm: string;
  state: string;
  ppid: number;
  /** The session id (a session leader's pid; setsid makes one). */
  session: number;
  /** utime + stime, in clock ticks. */
  cpuTicks: number;
  /** Start time after boot, in clock ticks. */
  startTicks: number;
  /** Resident set, in pages. */
  rssPages: number;
}

/** The last field parseStat reads (rss). */
const LAST_FIELD = 24;

/**
 * Parse /proc/<pid>/stat. The comm field sits in parentheses and may itself contain ") (":
 * everything after the LAST ")" is the space-separated rest (design.md §5).
 */
export function parseStat(text: string, file: string): ProcStat {
  const open = text.indexOf('(');
  const close = text.lastIndexOf(')');
  if (open < 0 || close < open) throw new ProcFormatError(file, 'no "(comm)" field');
  const pid = Number(text.slice(0, open).trim());
  // Only up to field 24 (rss): the other thirty are not split off (the freeze check parses
  // every session's agent each minute).
  const rest = text.slice(close + 2).trim().split(' ', LAST_FIELD - 2);
  // rest[0] is field 3 (state); field N is rest[N - 3].
  const field = (n: number): number => {
    const v = rest[n - 3];
    if (v === undefined || !/^-?\d+$/.test(v)) throw new ProcFormatError(file, `field ${n} is ${JSON.stringify(v)}`);
    return Number(v);
  };
  if (!Number.isInteger(pid) || pid <= 0) throw new ProcFormatError(file, 'no pid');
  return {
    pid,
    comm: text.slice(open + 1, close),
    state: rest[0] ?? '?',
    ppid: field(4),
    session: field(6),
    cpuTicks: field(14) + field(15),
    startTicks: field(22),
    rssPages: field(24),
  };
}

/** The real uid from /proc/<pid>/status ("Uid:\treal\teffective\tsaved\tfs"). */
export function parseStatusUid(text: string, file: string): number {
  const m = /^Uid:\s+(\d+)/m.exec(text);
  if (!m) throw new ProcFormatError(file, 'no Uid line');
  return Number(m[1]);
}

/** /proc/<pid>/cmdline: NUL-separated argv. Never log it: arguments carry tokens. */
export function parseCmdline(buf: Buffer): string[] {
  const parts = buf.toString('utf8').split('\0');
  if (parts.length > 0 && parts[parts.length - 1] === '') parts.pop();
  return parts;
}

/** The value of `key` in a /proc/<pid>/environ buffer, without decoding the rest. */
export function environValue(buf: Buffer, key: string): string | undefined {
  const needle = Buffer.from(`${key}=`);
  // A native search for "KEY="; a hit counts only at the start of an entry ("X=KEY=..." is not it).
  for (let at = buf.indexOf(needle); at >= 0; at = buf.indexOf(needle, at + 1)) {
    if (at === 0 || buf[at - 1] === 0) {
      const end = buf.indexOf(0, at);
      return buf.toString('utf8', at + needle.length, end < 0 ? buf.length : end);
    }
  }
  return undefined;
}
