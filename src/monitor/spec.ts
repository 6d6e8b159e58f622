/**
 * What an agent asks a monitor to watch (issue 13), checked before anything runs: one explicit
 * `type` per monitor, an argv (never a shell string) wherever a command runs, and bounds that
 * make a monitor cheap and finite (a poll's timeout shorter than its interval, output caps,
 * a failure count that suspends it). Pure: zod only, no files, no clock.
 */
import { z } from 'zod';

/** A command as an argv: the program and its arguments, never one string for a shell. */
const argv = z.array(z.string().min(1)).min(1, 'an argv: the program and its arguments, e.g. ["curl", "-fsS", "http://localhost:3000/health"]');
const seconds = z.number().positive();
/** A regex given as a string; checked to compile here, so a bad one is refused before it runs. */
const regex = z.string().min(1).refine((s) => {
  try {
    new RegExp(s);
    return true;
  } catch {
    return false;
  }
}, 'a regular expression that compiles (JavaScript syntax)');

/** Notices are small: at most this many lines each, whatever maxLines asks (a context is precious). */
export const MAX_LINES_CAP = 50;
/** A poll never runs more often than this: a monitor is not a busy loop. */
export const MIN_POLL_INTERVAL_S = 5;
/** Output kept per tick or line batch; the rest is counted in a truncation receipt. 16 KiB: a screenful of logs. */
export const OUTPUT_CAP_BYTES = 16 * 1024;

const common = {
  label: z.string().min(1).max(80).optional(),
  /** What a second start with the same reuseKey (or the same source) does. */
  reuse: z.enum(['return-existing', 'replace', 'parallel']).default('return-existing'),
  reuseKey: z.string().min(1).max(200).optional(),
  /** New output matching any of these is told (all output is kept, only matches are told). */
  notifyOn: z.array(regex).max(20).default([]),
  /** Matches within this span are told together, as one notice. */
  coalesceSeconds: z.number().min(0).max(3600).default(5),
  maxLines: z.number().int().min(1).max(MAX_LINES_CAP).default(10),
  /** A notice that the monitor is alive and what it last saw, this often; none when absent. */
  heartbeatMinutes: z.number().positive().max(24 * 60).optional(),
  /** An absolute end (ISO 8601 with a zone, e.g. "2026-12-01T06:00:00Z"): the monitor stops then. */
  expiresAt: z.iso.datetime({ offset: true }).optional(),
  /** Failures in a row before the monitor is suspended (and told). */
  maxConsecutiveFailures: z.number().int().min(1).max(100).default(5),
};

const spawn = z.object({ type: z.literal('spawn'), argv, cwd: z.string().startsWith('/').optional(), detached: z.boolean().default(false), ...common }).strict();
const poll = z
  .object({ type: z.literal('poll'), argv, intervalS: seconds.min(MIN_POLL_INTERVAL_S), timeoutS: seconds.optional(), ...common })
  .strict()
  .transform((p) => ({ ...p, timeoutS: p.timeoutS ?? Math.max(1, Math.floor(p.intervalS / 2)) }))
  .refine((p) => p.timeoutS < p.intervalS, { message: 'timeoutS must be shorter than intervalS: ticks never overlap', path: ['timeoutS'] });
const tail = z.object({ type: z.literal('tail'), path: z.string().startsWith('/', 'an absolute path'), fromStart: z.boolean().default(false), ...common }).strict();
const file = z.object({ type: z.literal('file'), path: z.string().startsWith('/', 'an absolute path'), lastLines: z.number().int().min(0).max(MAX_LINES_CAP).default(5), ...common }).strict();
const processByPidFile = z.object({ type: z.literal('process'), pidFile: z.string().startsWith('/', 'an absolute path'), ...common }).strict();
const processByMatch = z.object({ type: z.literal('process'), match: z.string().min(1).max(64), ...common }).strict();
const ssh = z
  .object({ type: z.literal('ssh'), host: z.string().regex(/^[A-Za-z0-9_][A-Za-z0-9._@:-]*$/, 'a host as ssh takes it (user@host), no options'), argv, intervalS: seconds.min(MIN_POLL_INTERVAL_S), timeoutS: seconds.optional(), ...common })
  .strict()
  .transform((p) => ({ ...p, timeoutS: p.timeoutS ?? Math.max(1, Math.floor(p.intervalS / 2)) }))
  .refine((p) => p.timeoutS < p.intervalS, { message: 'timeoutS must be shorter than intervalS: ticks never overlap', path: ['timeoutS'] });
const http = z
  .object({ type: z.literal('http'), url: z.url({ protocol: /^https?$/ }), intervalS: seconds.min(MIN_POLL_INTERVAL_S), timeoutS: seconds.optional(), expectStatus: z.number().int().min(100).max(599).optional(), ...common })
  .strict()
  .transform((p) => ({ ...p, timeoutS: p.timeoutS ?? Math.max(1, Math.floor(p.intervalS / 2)) }))
  .refine((p) => p.timeoutS < p.intervalS, { message: 'timeoutS must be shorter than intervalS: ticks never overlap', path: ['timeoutS'] });

export const monitorSpecSchema = z.union([spawn, poll, tail, file, processByPidFile, processByMatch, ssh, http]);
export type MonitorSpec = z.output<typeof monitorSpecSchema>;
export type MonitorType = MonitorSpec['type'];
export const MONITOR_TYPES = ['spawn', 'poll', 'tail', 'file', 'process', 'ssh', 'http'] as const;
const BY_TYPE: Record<MonitorType, z.ZodType[]> = { spawn: [spawn], poll: [poll], tail: [tail], file: [file], process: [processByPidFile, processByMatch], ssh: [ssh], http: [http] };

/** A spec that cannot be used: `issues` name each key and what is wrong. */
export class MonitorSpecError extends Error {
  constructor(readonly issues: string[]) {
    super(`bad monitor: ${issues.join('; ')}`);
    this.name = 'MonitorSpecError';
  }
}

/** Parse an agent's request; every problem named by its key. */
export function parseMonitorSpec(input: unknown): MonitorSpec {
  const type = (input as { type?: unknown } | null)?.type;
  if (typeof type !== 'string' || !(MONITOR_TYPES as readonly string[]).includes(type)) {
    throw new MonitorSpecError([`type: one of ${MONITOR_TYPES.join(', ')} (got ${JSON.stringify(type) ?? 'nothing'})`]);
  }
  // The union would report every branch's complaint; the branch of the type asked is the one that matters.
  let last: z.ZodError | undefined;
  for (const schema of BY_TYPE[type as MonitorType]) {
    const r = schema.safeParse(input);
    if (r.success) return r.data as MonitorSpec;
    last = r.error;
  }
  throw new MonitorSpecError((last?.issues ?? []).map((i) => `${i.path.length ? i.path.join('.') : '(monitor)'}: ${i.message}`));
}

/** When a monitor expires, as epoch ms (wall clock: expiresAt is a time of day people give). */
export function expiresAtMs(spec: MonitorSpec): number | undefined {
  return spec.expiresAt === undefined ? undefined : Date.parse(spec.expiresAt);
}
