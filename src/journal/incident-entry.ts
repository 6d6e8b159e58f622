/**
 * An incident as a structured journal entry (pure): the human sentence as MESSAGE, the type's
 * fixed MESSAGE_ID, the PRIORITY of its log level, whose session and unit, and each figure as a
 * field of its own, named for what it means (docs/journal.md lists them). Never a command line:
 * incidents carry program names and pids only, and a figure this mapping does not know is sent
 * only when it is a plain value (a number, a word, a flag, or a list of them).
 */
import type { Incident } from '../daemon/incidents';
import { type JournalField, isFieldName } from './encode';
import { MESSAGE_IDS } from './message-ids';

/** sbd's SYSLOG_IDENTIFIER: `journalctl -t sbd`. */
export const SYSLOG_IDENTIFIER = 'sbd';

/** The incident's own keys, sent as the fixed fields (or, the time, by the journal's own stamp). */
const FIXED = new Set(['type', 'unit', 'session', 'atMs', 'message', 'observeOnly']);

type Value = string | undefined;

/** A number as the journal shows it: whole numbers as they are, fractions to 3 places, an unlimited size as systemd spells it. */
function num(v: unknown): Value {
  if (typeof v !== 'number' || Number.isNaN(v)) return undefined;
  if (v === Infinity) return 'infinity';
  if (!Number.isFinite(v)) return undefined;
  return Number.isInteger(v) ? String(v) : String(Number(v.toFixed(3)));
}

/** A plain value: a number, a word, a flag (1 or 0), or a list of them separated by spaces. */
function plain(v: unknown): Value {
  if (typeof v === 'string') return v;
  if (typeof v === 'boolean') return v ? '1' : '0';
  if (typeof v === 'number') return num(v);
  if (Array.isArray(v)) {
    const parts = v.map((x) => (typeof x === 'object' && x !== null ? undefined : plain(x)));
    return parts.every((p) => p !== undefined) ? parts.join(' ') : undefined;
  }
  return undefined;
}

/** Program names (a name may hold a space): separated by a comma and a space, as in the messages. */
function programs(v: unknown): Value {
  return Array.isArray(v) && v.every((x) => typeof x === 'string') ? v.join(', ') : undefined;
}

/** Records as one line each (the value then holds newlines: sent in the binary-safe form). */
function lines<T>(v: unknown, line: (row: T) => string): Value {
  return Array.isArray(v) && v.length > 0 ? (v as T[]).map(line).join('\n') : undefined;
}

/** `key=value` pairs of a flat-keyed cgroup file (memory.events). */
function keyed(v: unknown): Value {
  if (v === null || typeof v !== 'object') return undefined;
  return Object.entries(v as Record<string, unknown>).map(([k, n]) => `${k}=${num(n) ?? '?'}`).join(' ');
}

interface ReapRowLike { pid: number; program: string; outcome: string; rssBytes: number }
interface MemberLike { path: string; currentBytes: number; growthBytes: number; fairShareBytes: number }
interface KillLike { pid: number; comm: string; oomMemcg: string }

/** Figures whose field is named otherwise than its key says, or that need shaping; null: not sent. */
const RENAMED: Record<string, ((v: unknown) => JournalField[]) | null> = {
  name: (v) => field('PROGRAM', plain(v)),
  // the brake (MemoryHigh) in force once the incident was told: after a raise or lowering its new value
  toBytes: (v) => field('BRAKE_BYTES', num(v)),
  fromBytes: (v) => field('BRAKE_FROM_BYTES', num(v)),
  highBytes: (v) => field('BRAKE_BYTES', num(v)),
  maxBytes: (v) => field('MEMORY_MAX_BYTES', num(v)),
  sparedGit: (v) => field('SPARED_GIT_PIDS', plain(v)),
  terminated: (v) => field('TERMINATED_PIDS', plain(v)),
  killed: (v) => field('KILLED_PIDS', plain(v)),
  skipped: (v) => field('SKIPPED_PIDS', plain(v)),
  survived: (v) => field('SURVIVED_PIDS', plain(v)),
  brakeLowered: (v) => field('BRAKE_PUT_BACK', plain(v)),
  why: (v) => field('REASON', plain(v)),
  was: (v) => field('RECOVERED_FROM', plain(v)),
  open: (v) => field('FREEZE_KINDS', plain(v)),
  commandsOpen: (v) => field('COMMANDS_OPEN', programs(v)),
  count: (v) => field('OOM_KILLS', num(v)),
  kernelLog: (v) => field('KERNEL_LOG_PROBLEM', plain(v)),
  events: (v) => field('MEMORY_EVENTS', keyed(v)),
  eventsLocal: (v) => field('MEMORY_EVENTS_LOCAL', keyed(v)),
  // a stop's saved record (observe-only stop-finished): its processes by pid
  processes: (v) => field('PIDS', Array.isArray(v) ? plain(v.map((p: { pid: number }) => p.pid)) : undefined),
  members: (v) => field('MEMBERS', lines<MemberLike>(v, (m) => `${m.path} current_bytes=${m.currentBytes} growth_bytes=${m.growthBytes} fair_share_bytes=${m.fairShareBytes}`)),
  procs: (v) => {
    const rows = Array.isArray(v) ? (v as ReapRowLike[]) : [];
    return [
      ...field('PIDS', plain(rows.map((r) => r.pid))),
      ...field('STOPPED_PIDS', plain(rows.filter((r) => r.outcome === 'terminated' || r.outcome === 'killed').map((r) => r.pid))),
      ...field('RSS_BYTES', num(rows.reduce((sum, r) => sum + r.rssBytes, 0))),
      ...field('PROCESSES', lines<ReapRowLike>(rows, (r) => `${r.pid} ${r.program} ${r.outcome}`)),
    ];
  },
  kills: (v) => {
    const kills = Array.isArray(v) ? (v as KillLike[]) : [];
    if (kills.length === 0) return [];
    return [
      ...field('OOM_KILLED_PIDS', plain(kills.map((k) => k.pid))),
      ...field('OOM_KILLED_PROGRAMS', programs(kills.map((k) => k.comm))),
      ...field('OOM_MEMCG', kills[0]?.oomMemcg),
    ];
  },
  // times on sbd's monotonic clock or when a reap began: nothing an operator can place
  killDueAtMs: null,
  startedAtMs: null,
};

function field(name: string, value: Value): JournalField[] {
  return value === undefined || value === '' ? [] : [[name, value]];
}

/** Field names made already: incidents' keys are a few dozen, and each incident sends several. */
const fieldNames = new Map<string, string>();

/** `fairShareBytes` -> `FAIR_SHARE_BYTES`. */
export function fieldNameOf(key: string): string {
  let name = fieldNames.get(key);
  if (name === undefined) {
    name = key.replace(/([a-z0-9])([A-Z])/g, '$1_$2').toUpperCase();
    if (fieldNames.size < 256) fieldNames.set(key, name); // sbd's own keys; never unbounded
  }
  return name;
}

/** Keys a command line could hide behind: never sent, whatever they hold (they carry tokens). */
const COMMAND_LINE = /argv|cmdline|args|arguments/i;

/** The figures' fields, in the incident's order. */
export function figureFields(i: Incident): JournalField[] {
  const out: JournalField[] = [];
  for (const [key, v] of Object.entries(i)) {
    if (FIXED.has(key) || COMMAND_LINE.test(key)) continue;
    const shape = RENAMED[key];
    if (shape === null) continue;
    out.push(...(shape ? shape(v) : field(fieldNameOf(key), plain(v))));
  }
  // A stop's outcome as one list: what sbd ended, by SIGTERM or SIGKILL.
  if (Array.isArray(i.terminated) || Array.isArray(i.killed)) {
    const stopped = [...((i.terminated as number[] | undefined) ?? []), ...((i.killed as number[] | undefined) ?? [])].sort((a, b) => a - b);
    out.push(...field('STOPPED_PIDS', plain(stopped)));
  }
  return out;
}

/** Each name once, the first keeps it; a name the journal would drop is not sent. */
function once(fields: readonly JournalField[]): JournalField[] {
  const seen = new Set<string>();
  return fields.filter(([name]) => {
    if (seen.has(name) || !isFieldName(name)) return false;
    seen.add(name);
    return true;
  });
}

/**
 * The whole entry: MESSAGE, MESSAGE_ID, PRIORITY, SYSLOG_IDENTIFIER, INCIDENT (its type),
 * SESSION, UNIT and USER_UNIT (the scope, or the slice: `journalctl --user -u UNIT` then shows
 * sbd's incidents about it beside systemd's own), OBSERVE_ONLY=1 when nothing was done, then
 * the figures.
 */
export function incidentEntry(i: Incident, priority: number): JournalField[] {
  return once([
    ['MESSAGE', i.message],
    ['MESSAGE_ID', MESSAGE_IDS[i.type]],
    ['PRIORITY', String(priority)],
    ['SYSLOG_IDENTIFIER', SYSLOG_IDENTIFIER],
    ['INCIDENT', i.type],
    ['SESSION', i.session],
    ['UNIT', i.unit],
    ['USER_UNIT', i.unit],
    ...(i.observeOnly ? [['OBSERVE_ONLY', '1'] as const] : []),
    ...figureFields(i),
  ]);
}
