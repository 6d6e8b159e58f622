/**
 * Monitor records on disk (issue 13): one JSON file per monitor under
 * $XDG_STATE_HOME/sessionbrake/monitors/, written durably, read back checked. A record that cannot
 * be read or does not have the shape is never silently dropped: `gc --apply` archives it (to
 * archive/ beside the records, with the reason), and nothing is ever killed on a record's word.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { z } from 'zod';
import { writeDurably } from '../util/durable';
import { xdgHome } from '../util/xdg';
import { monitorSpecSchema } from './spec';

const lifecycle = z.enum(['running', 'suspended', 'awaiting-confirmation', 'quarantined', 'stopped', 'expired', 'gone']);

export const monitorRecordSchema = z
  .object({
    id: z.uuid(),
    sessionId: z.string().min(1),
    /** The session's unit and invocation: a record of an earlier session behind the same name is an orphan. */
    sessionUnit: z.string().min(1),
    sessionInvocation: z.string().min(1),
    spec: monitorSpecSchema,
    sourceHash: z.string().regex(/^[0-9a-f]{64}$/),
    lifecycle,
    /** Why it is quarantined, suspended or gone. */
    reason: z.string().optional(),
    createdAtMs: z.number(),
    /** Who runs it: sbd's unique bus name when it took the monitor, and its start (the lease's epoch). */
    owner: z.object({ busName: z.string().min(1), epoch: z.number().int().nonnegative() }),
    unit: z.object({ name: z.string().min(1), invocationId: z.string().optional() }).optional(),
    ticks: z.number().int().nonnegative().default(0),
    consecutiveFailures: z.number().int().nonnegative().default(0),
    /** For a tail: the byte offset read up to (resumes there after a restart). */
    offset: z.number().int().nonnegative().optional(),
    /** The id of the last notice whose lines `offset` is past: a notice in the inbox after it was
     * told by an sbd killed before it saved the offset (its `through` says how far it read). */
    toldNotice: z.number().int().positive().optional(),
    truncations: z.number().int().nonnegative().default(0),
    exit: z.object({ code: z.string(), status: z.number().int() }).optional(),
    /** For a spawn: the crashes systemd restarted, counted for sbd's own crash-loop fuse (monitor/crash-count.ts). */
    crashes: z.object({ restartsSeen: z.number().int().nonnegative(), bootId: z.string().min(1), atMonoMs: z.array(z.number()) }).optional(),
    /** For a process monitor: the process it observes, as verified (its start time tells it from a later process with the same pid). */
    process: z.object({ pid: z.number().int().positive(), startTicks: z.number().int().nonnegative(), comm: z.string() }).optional(),
    /** For a file monitor: the file's state last told (hashes of its last lines, never the lines). */
    fileState: z.object({ exists: z.boolean(), size: z.number().int().nonnegative(), tailHash: z.string(), matchHash: z.string() }).optional(),
    /** When it stopped, expired or was found gone (wall clock, for people and gc's retention). */
    endedAtMs: z.number().optional(),
    /** Its expiresAt on CLOCK_MONOTONIC with the boot id (monitor/expiry.ts): a restart on the same boot keeps it, whatever the wall clock did meanwhile. */
    expiry: z.object({ bootId: z.string().min(1), atMonoMs: z.number() }).optional(),
  })
  .strict();

export type MonitorRecord = z.output<typeof monitorRecordSchema>;

export interface CorruptRecord {
  file: string;
  why: string;
}

export const monitorsDir = (env: NodeJS.ProcessEnv = process.env): string => path.join(xdgHome('state', env), 'sessionbrake', 'monitors');

export const recordFile = (dir: string, id: string): string => path.join(dir, `${id}.json`);

export function saveRecord(dir: string, r: MonitorRecord): void {
  writeDurably(recordFile(dir, r.id), `${JSON.stringify(r)}\n`);
}

export function removeRecord(dir: string, id: string): void {
  fs.rmSync(recordFile(dir, id), { force: true });
}

/** Every record in `dir`: those that read back, and those that do not, each with why. */
export function loadRecords(dir: string): { records: MonitorRecord[]; corrupt: CorruptRecord[] } {
  let names: string[];
  try {
    names = fs.readdirSync(dir);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return { records: [], corrupt: [] };
    throw err;
  }
  const records: MonitorRecord[] = [];
  const corrupt: CorruptRecord[] = [];
  for (const name of names.filter((n) => n.endsWith('.json')).sort()) {
    const file = path.join(dir, name);
    let v: unknown;
    try {
      v = JSON.parse(fs.readFileSync(file, 'utf8'));
    } catch (err) {
      corrupt.push({ file, why: `not readable JSON: ${(err as Error).message}` });
      continue;
    }
    const r = monitorRecordSchema.safeParse(v);
    if (!r.success) {
      corrupt.push({ file, why: r.error.issues.map((i) => `${i.path.join('.') || 'the record'}: ${i.message}`).join('; ') });
      continue;
    }
    if (`${r.data.id}.json` !== name) {
      corrupt.push({ file, why: `names monitor ${r.data.id}, not the one of its file name` });
      continue;
    }
    records.push(r.data);
  }
  return { records, corrupt };
}

/** Move a record aside into archive/ with a note of why (gc --apply); never deletes. */
export function archiveRecord(dir: string, file: string, why: string): string {
  const archive = path.join(dir, 'archive');
  fs.mkdirSync(archive, { recursive: true, mode: 0o700 });
  const to = path.join(archive, `${path.basename(file, '.json')}.${Date.now()}.json`);
  fs.renameSync(file, to);
  fs.writeFileSync(`${to}.why`, `${why}\n`, { mode: 0o600 });
  return to;
}
