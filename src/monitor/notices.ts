/**
 * From a monitor's new output to the agent's inbox (issue 13): only lines that match notifyOn
 * are told; matches within coalesceSeconds go out as one notice; a notice has at most maxLines
 * lines and says how many more matched (a truncation receipt), so that a flood of errors never
 * floods the agent's context. Pure: lines and times in, notices out.
 */

export interface NoticeConfig {
  notifyOn: readonly string[];
  coalesceSeconds: number;
  maxLines: number;
}

export interface Pending {
  /** When the first match of this batch was seen (monotonic ms): the batch goes out coalesceSeconds later. */
  firstAtMs: number;
  lines: string[];
  /** Matches beyond maxLines: counted, not kept. */
  dropped: number;
}

export interface Notice {
  lines: string[];
  /** Matching lines left out of this notice. */
  truncated: number;
}

/** A line longer than this is cut (with a mark): one line of a minified bundle can be megabytes. */
export const MAX_LINE_CHARS = 500;

export const cut = (line: string): string => (line.length > MAX_LINE_CHARS ? `${line.slice(0, MAX_LINE_CHARS)}… (${line.length - MAX_LINE_CHARS} more characters)` : line);

/** Compiled once per spec (its notifyOn array lives as long as the record's spec), not per read. */
const compiled = new WeakMap<readonly string[], RegExp[]>();

export function compileMatchers(cfg: NoticeConfig): RegExp[] {
  let matchers = compiled.get(cfg.notifyOn);
  if (!matchers) {
    matchers = cfg.notifyOn.map((r) => new RegExp(r));
    compiled.set(cfg.notifyOn, matchers);
  }
  return matchers;
}

/** Add new output lines; returns the batch to keep (undefined when nothing matched yet). */
export function addLines(pending: Pending | undefined, lines: readonly string[], matchers: readonly RegExp[], maxLines: number, nowMs: number): Pending | undefined {
  let p = pending;
  for (const line of lines) {
    if (!matchers.some((m) => m.test(line))) continue;
    p ??= { firstAtMs: nowMs, lines: [], dropped: 0 };
    if (p.lines.length < maxLines) p.lines.push(cut(line));
    else p.dropped += 1;
  }
  return p;
}

/** When the pending batch is due (monotonic ms). */
export const dueAtMs = (p: Pending, coalesceSeconds: number): number => p.firstAtMs + coalesceSeconds * 1000;

/** The notice of a due batch, or undefined while it is still gathering. */
export function flush(p: Pending | undefined, coalesceSeconds: number, nowMs: number): Notice | undefined {
  if (!p || nowMs < dueAtMs(p, coalesceSeconds)) return undefined;
  return { lines: p.lines, truncated: p.dropped };
}
