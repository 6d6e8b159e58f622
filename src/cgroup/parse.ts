/**
 * Pure parsers for cgroup v2 files (kernel Documentation/admin-guide/cgroup-v2.rst). Each takes
 * the file's text and the file's name (for the error) and throws CgroupFormatError on content
 * it does not understand, naming the file and the line.
 */

/** A cgroup file whose content is not what the kernel documents. */
export class CgroupFormatError extends Error {
  readonly file: string;
  constructor(file: string, detail: string) {
    super(`${file}: unexpected content: ${detail}`);
    this.name = 'CgroupFormatError';
    this.file = file;
  }
}

function nonNegativeInt(file: string, key: string, text: string): number {
  if (!/^\d+$/.test(text)) throw new CgroupFormatError(file, `${key} is ${JSON.stringify(text)}, expected a whole number`);
  return Number(text);
}

/**
 * Flat keyed files, one `key value` per line: memory.events(.local), memory.stat, cpu.stat,
 * cgroup.events. Unknown keys are kept (newer kernels add some).
 */
export function parseFlatKeyed(text: string, file: string): Record<string, number> {
  const out: Record<string, number> = {};
  for (const line of text.split('\n')) {
    if (line === '') continue;
    const parts = line.split(' ');
    if (parts.length !== 2) throw new CgroupFormatError(file, `line ${JSON.stringify(line)} is not "key value"`);
    const [key, value] = parts as [string, string];
    out[key] = nonNegativeInt(file, key, value);
  }
  return out;
}

/** Like parseFlatKeyed, and every key of `required` must be present. */
export function parseRequiredKeys<K extends string>(text: string, file: string, required: readonly K[]): Record<K, number> & Record<string, number> {
  const all = parseFlatKeyed(text, file);
  for (const key of required) {
    if (!(key in all)) throw new CgroupFormatError(file, `no "${key}" line`);
  }
  return all as Record<K, number> & Record<string, number>;
}

/**
 * The values of `keys` alone from a flat keyed file (memory.stat has some 50 lines; a sample needs
 * three): each found by its line's start, the rest of the file left unparsed. Every key must be
 * there with a whole number, as in parseRequiredKeys; the other lines are not checked.
 */
export function pickKeys<K extends string>(text: string, file: string, keys: readonly K[]): Record<K, number> {
  const out = {} as Record<K, number>;
  for (const key of keys) {
    const at = text.startsWith(`${key} `) ? 0 : text.indexOf(`\n${key} `);
    if (at < 0) throw new CgroupFormatError(file, `no "${key}" line`);
    const from = at === 0 ? key.length + 1 : at + key.length + 2;
    let end = text.indexOf('\n', from);
    if (end < 0) end = text.length;
    out[key] = nonNegativeInt(file, key, text.slice(from, end));
  }
  return out;
}

/** memory.high, memory.max, memory.swap.max: bytes, or `max` (no limit) as Infinity. */
export function parseLimit(text: string, file: string): number {
  const value = text.trim();
  if (value === 'max') return Infinity;
  return nonNegativeInt(file, 'limit', value);
}

/** memory.current and other single-number files. */
export function parseSingle(text: string, file: string): number {
  return nonNegativeInt(file, 'value', text.trim());
}

/** One line of a PSI file: averages in percent, total in µs. */
export interface PressureLine {
  avg10: number;
  avg60: number;
  avg300: number;
  totalUs: number;
}
export interface Pressure {
  some: PressureLine;
  /** Absent from /proc/pressure/cpu on old kernels; always present for memory. */
  full: PressureLine | undefined;
}

const PSI_LINE = /^(some|full) avg10=(\d+\.\d+) avg60=(\d+\.\d+) avg300=(\d+\.\d+) total=(\d+)$/;

/** memory.pressure, /proc/pressure/memory. */
export function parsePressure(text: string, file: string): Pressure {
  const lines: Partial<Record<'some' | 'full', PressureLine>> = {};
  for (const line of text.split('\n')) {
    if (line === '') continue;
    const m = PSI_LINE.exec(line);
    if (!m) throw new CgroupFormatError(file, `line ${JSON.stringify(line)} is not a PSI line`);
    lines[m[1] as 'some' | 'full'] = { avg10: Number(m[2]), avg60: Number(m[3]), avg300: Number(m[4]), totalUs: Number(m[5]) };
  }
  if (!lines.some) throw new CgroupFormatError(file, 'no "some" line');
  return { some: lines.some, full: lines.full };
}

/** cgroup.procs, cgroup.threads: one pid a line. */
export function parsePids(text: string, file: string): number[] {
  return text
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => nonNegativeInt(file, 'pid', l));
}

/** The first line of /proc/<pid>/cgroup on a pure v2 system: `0::/path`. Undefined when the process has no v2 cgroup. */
export function parseProcCgroup(text: string, file: string): string | undefined {
  for (const line of text.split('\n')) {
    if (line.startsWith('0::')) return line.slice(3);
  }
  if (text.trim() === '') throw new CgroupFormatError(file, 'empty');
  return undefined;
}
