/**
 * A file monitor's decision (issue 13), pure: from the state last told and the state now (exists,
 * size, its last lines), what to tell. It appearing and disappearing are always told; a change
 * (of size or of its last lines) is told with its last lines, or, when notifyOn is given, only
 * when the matching lines among them changed, with those lines. Lines are kept as hashes in the
 * record, never as text.
 */
import { createHash } from 'node:crypto';
import { cut } from './notices';

export interface FileState {
  exists: boolean;
  size: number;
  /** sha256 of the last lines; of the matching ones in matchHash. */
  tailHash: string;
  matchHash: string;
}

export interface FileLook {
  state: FileState;
  /** Its last lines (at most lastLines), each cut to a notice's width. */
  lines: string[];
}

const hash = (lines: readonly string[]): string => createHash('sha256').update(lines.join('\n')).digest('hex');

/** The state of a file seen as `size` bytes ending in `lastLines` (undefined: it does not exist). */
export function lookOf(seen: { size: number; lines: readonly string[] } | undefined, matchers: readonly RegExp[]): FileLook {
  if (!seen) return { state: { exists: false, size: 0, tailHash: hash([]), matchHash: hash([]) }, lines: [] };
  const lines = seen.lines.map(cut);
  const matching = lines.filter((l) => matchers.some((m) => m.test(l)));
  return { state: { exists: true, size: seen.size, tailHash: hash(lines), matchHash: hash(matching) }, lines };
}

/** The last `n` whole lines of text read from a file's end; `fromStart` false when the read began mid-file (its first line is partial). */
export function lastLinesOf(text: string, n: number, fromStart: boolean): string[] {
  const lines = text.split('\n').map((l) => l.replace(/\r$/, ''));
  if (lines.at(-1) === '') lines.pop();
  if (!fromStart) lines.shift();
  return n === 0 ? [] : lines.slice(-n);
}

export interface FileNotice {
  kind: 'appeared' | 'disappeared' | 'changed';
  text: string;
  lines: string[];
}

const bytes = (n: number): string => `${n} byte${n === 1 ? '' : 's'}`;

/**
 * What to tell (undefined: nothing). `replaced`: the file went and came back within the span
 * (a rename over it), so a change is told even if size and lines are the same.
 */
export function fileChange(before: FileState | undefined, now: FileLook, matchers: readonly RegExp[], maxLines: number, replaced = false): FileNotice | undefined {
  const was = before ?? { exists: false, size: 0, tailHash: '', matchHash: '' };
  const after = now.state;
  const matching = matchers.length === 0 ? now.lines : now.lines.filter((l) => matchers.some((m) => m.test(l)));
  const shown = matching.slice(-maxLines);
  if (!was.exists && after.exists) return { kind: 'appeared', text: `appeared (${bytes(after.size)})`, lines: shown };
  if (was.exists && !after.exists) return { kind: 'disappeared', text: 'disappeared', lines: [] };
  if (!after.exists) return undefined;
  const changed = replaced || was.size !== after.size || was.tailHash !== after.tailHash;
  if (!changed) return undefined;
  if (matchers.length > 0 && (matching.length === 0 || was.matchHash === after.matchHash)) return undefined;
  const size = was.size === after.size ? bytes(after.size) : `${bytes(was.size)} → ${bytes(after.size)}`;
  return { kind: 'changed', text: `changed${replaced ? ' (replaced)' : ''}: ${size}`, lines: shown };
}
