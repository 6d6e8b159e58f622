/**
 * A monitor's identity (issue 13): one UUID per logical monitor for its whole life, through sbd's
 * restarts; a short handle for commands (the UUID's first 8 hex digits, longer only where two
 * monitors of the session would share it); a source key, the hash of what it watches, so that
 * the same request twice finds the first. And the reuse decision, pure: what a start does when a
 * monitor with the same reuseKey (or source) already runs in the session.
 */
import { createHash, randomUUID } from 'node:crypto';
import type { MonitorSpec } from './spec';

/** What the monitor watches, without its labels and notification settings: equal sources watch the same thing. */
export function sourceOf(spec: MonitorSpec): unknown {
  switch (spec.type) {
    case 'spawn':
      return { type: spec.type, argv: spec.argv, cwd: spec.cwd ?? null };
    case 'poll':
      return { type: spec.type, argv: spec.argv, intervalS: spec.intervalS };
    case 'tail':
    case 'file':
      return { type: spec.type, path: spec.path };
    case 'process':
      return { type: spec.type, pidFile: 'pidFile' in spec ? spec.pidFile : null, match: 'match' in spec ? spec.match : null };
    case 'ssh':
      return { type: spec.type, host: spec.host, argv: spec.argv, intervalS: spec.intervalS };
    case 'http':
      return { type: spec.type, url: spec.url, intervalS: spec.intervalS };
  }
}

/** sha256 of the source, hex: the "command hash" of a receipt (the argv itself is never logged). */
export function sourceHash(spec: MonitorSpec): string {
  return createHash('sha256').update(JSON.stringify(sourceOf(spec))).digest('hex');
}

export const newMonitorId = (): string => randomUUID();

/** The shortest prefix of `id` (at least 8 hex digits, dashes dropped) that no other id of `others` shares. */
export function handleOf(id: string, others: readonly string[]): string {
  const hex = (x: string): string => x.replaceAll('-', '');
  const mine = hex(id);
  const rest = others.filter((o) => o !== id).map(hex);
  for (let n = 8; n < mine.length; n++) {
    const h = mine.slice(0, n);
    if (!rest.some((o) => o.startsWith(h))) return h;
  }
  return mine;
}

/** Find a monitor by handle, UUID or label among `monitors`; ambiguous or unknown is said. */
export function resolveHandle<T extends { id: string; label?: string | undefined }>(monitors: readonly T[], handle: string): T | { error: string } {
  const h = handle.toLowerCase().replaceAll('-', '');
  const byId = monitors.filter((m) => m.id.replaceAll('-', '').startsWith(h));
  const found = h.length >= 4 && byId.length > 0 ? byId : monitors.filter((m) => m.label === handle);
  if (found.length === 1 && found[0]) return found[0];
  if (found.length === 0) return { error: `no monitor "${handle}" in this session (sbctl monitor list shows them)` };
  return { error: `"${handle}" names ${found.length} monitors: give more of the handle` };
}

export interface Existing {
  id: string;
  reuseKey?: string | undefined;
  sourceHash: string;
  /** Still running or waiting (not stopped, expired or removed). */
  live: boolean;
}

export type ReuseDecision = { answer: 'created' } | { answer: 'reused'; id: string } | { answer: 'replaced'; id: string };

/** What a start of `spec` does beside the live monitors of its session (pure). */
export function decideReuse(spec: MonitorSpec, hash: string, existing: readonly Existing[]): ReuseDecision {
  if (spec.reuse === 'parallel') return { answer: 'created' };
  const same = existing.find((e) => e.live && (spec.reuseKey !== undefined ? e.reuseKey === spec.reuseKey : e.reuseKey === undefined && e.sourceHash === hash));
  if (!same) return { answer: 'created' };
  return spec.reuse === 'replace' ? { answer: 'replaced', id: same.id } : { answer: 'reused', id: same.id };
}
