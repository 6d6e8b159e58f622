/**
 * What `sbctl run` tells sbd about a session it made, in $XDG_RUNTIME_DIR/sessionbrake/sessions/:
 * which process is the agent (pid and start time, so a recycled pid is never mistaken for it)
 * and where its heartbeat file is. A session made otherwise has no record; sbd then takes the
 * root of its process tree as the agent.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';

export interface SessionRecord {
  unit: string;
  /** The SESSIONBRAKE_SESSION marker value. */
  id: string;
  agentPid: number;
  /** /proc/<pid>/stat starttime of the agent, in clock ticks after boot. */
  agentStartTicks: number;
  heartbeat?: string;
  /** false: what the session leaves when its agent exits is told about, not stopped. */
  reap?: boolean;
  createdAtMs: number;
}

/** The directory of session records; undefined without XDG_RUNTIME_DIR. */
export function recordsDir(env: NodeJS.ProcessEnv = process.env): string | undefined {
  const runtime = env.XDG_RUNTIME_DIR;
  return runtime ? path.join(runtime, 'sessionbrake', 'sessions') : undefined;
}

/** Write atomically (temp file and rename): a reader never sees half a record. */
export function writeRecord(dir: string, rec: SessionRecord): string {
  fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
  const file = path.join(dir, `${rec.unit}.json`);
  const tmp = `${file}.${process.pid}.tmp`;
  fs.writeFileSync(tmp, `${JSON.stringify(rec)}\n`, { mode: 0o600 });
  fs.renameSync(tmp, file);
  return file;
}

function isRecord(v: unknown): v is SessionRecord {
  const r = v as Partial<SessionRecord> | null;
  return (
    r !== null && typeof r === 'object' && typeof r.unit === 'string' && typeof r.id === 'string' &&
    Number.isInteger(r.agentPid) && Number.isInteger(r.agentStartTicks) && typeof r.createdAtMs === 'number' &&
    (r.heartbeat === undefined || typeof r.heartbeat === 'string') &&
    (r.reap === undefined || typeof r.reap === 'boolean')
  );
}

/** The record of `unit`; undefined when there is none or it is unreadable (said via onBad). */
export function readRecord(dir: string, unit: string, onBad: (file: string, why: string) => void = () => {}): SessionRecord | undefined {
  const file = path.join(dir, `${unit}.json`);
  let text: string;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') onBad(file, String((err as Error).message));
    return undefined;
  }
  try {
    const v: unknown = JSON.parse(text);
    if (isRecord(v)) return v;
    onBad(file, 'not a session record');
  } catch (err) {
    onBad(file, `not valid JSON: ${(err as Error).message}`);
  }
  return undefined;
}

export function removeRecord(dir: string, unit: string): void {
  fs.rmSync(path.join(dir, `${unit}.json`), { force: true });
}

/** The units that have a record in `dir`. */
export function recordedUnits(dir: string): string[] {
  try {
    return fs.readdirSync(dir).filter((f) => f.endsWith('.json')).map((f) => f.slice(0, -'.json'.length));
  } catch {
    return [];
  }
}
