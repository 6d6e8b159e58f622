/**
 * A session's inbox (issue 13): notices for its agent, from its monitors and from sbd, each with
 * an id that only grows, so `sbctl inbox --since ID` reads exactly what is new. One JSON line
 * per notice in $XDG_STATE_HOME/sessionbrake/inbox/SESSION.jsonl, appended (a crash of sbd loses at most
 * the line being written, never an earlier one); kept to the newest MAX_KEPT notices.
 * A notice that carries `through` is synced before append returns: its monitor's record is then
 * saved (durably) with the offset past its lines, and a crash of the machine must not keep that
 * offset while losing the notice. Others are not: a killed sbd loses nothing (the kernel holds the
 * write), and sbd's incidents come in bursts (a storm) where a sync each would stall the loop.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { z } from 'zod';
import { writeDurably } from '../util/durable';
import { xdgHome } from '../util/xdg';

/** Notices kept per session: a night of a busy agent's notices, not a log. */
export const MAX_KEPT = 1000;

export const inboxEntrySchema = z.object({
  id: z.number().int().positive(),
  atMs: z.number(),
  /** 'sbd', or the monitor's handle. */
  from: z.string().min(1),
  kind: z.string().min(1),
  text: z.string(),
  lines: z.array(z.string()).optional(),
  truncated: z.number().int().nonnegative().optional(),
  /** The monitor's id (its handle, in `from`, may grow shorter as others end). */
  monitor: z.string().optional(),
  /** For lines read from a tailed file or a spawn's output: the byte offset they were read up to.
   * The append of the notice is the tell: a restarted sbd resumes past it (monitor/manager.ts). */
  through: z.number().int().nonnegative().optional(),
});
export type InboxEntry = z.output<typeof inboxEntrySchema>;

export const inboxDir = (env: NodeJS.ProcessEnv = process.env): string => path.join(xdgHome('state', env), 'sessionbrake', 'inbox');
/** A session's name as systemd allows it in a unit name: safe as a file name (no "/", not "." or ".."). */
const SESSION_NAME = /^[A-Za-z0-9:_.@\\-]+$/;

function fileOf(dir: string, session: string): string {
  if (!SESSION_NAME.test(session) || session === '.' || session === '..') throw new Error(`"${session}" is not a session name (letters, digits and :_.@\\- only)`);
  return path.join(dir, `${session}.jsonl`);
}

/** Every readable entry, oldest first; a torn last line (a crash mid-write) is left out. */
export function readInbox(dir: string, session: string): InboxEntry[] {
  let text: string;
  try {
    text = fs.readFileSync(fileOf(dir, session), 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw err;
  }
  const out: InboxEntry[] = [];
  for (const line of text.split('\n')) {
    if (line === '') continue;
    try {
      const r = inboxEntrySchema.safeParse(JSON.parse(line));
      if (r.success) out.push(r.data);
    } catch {
      /* a torn line: skipped */
    }
  }
  return out;
}

/** Each monitor's last notice with a `through` in a session's entries: how far its told lines
 * were read, and the notice's id. */
export function toldThrough(entries: readonly InboxEntry[]): Map<string, { through: number; notice: number }> {
  const out = new Map<string, { through: number; notice: number }>();
  for (const e of entries) if (e.monitor !== undefined && e.through !== undefined) out.set(e.monitor, { through: e.through, notice: e.id });
  return out;
}

/** The entries after `sinceId` (all with 0). */
export const entriesSince = (entries: readonly InboxEntry[], sinceId: number): InboxEntry[] => entries.filter((e) => e.id > sinceId);

function endsTorn(file: string): boolean {
  let fd: number;
  try {
    fd = fs.openSync(file, 'r');
  } catch {
    return false;
  }
  try {
    const size = fs.fstatSync(fd).size;
    if (size === 0) return false;
    const last = Buffer.alloc(1);
    fs.readSync(fd, last, 0, 1, size - 1);
    return last[0] !== 0x0a;
  } finally {
    fs.closeSync(fd);
  }
}

/** What a writer knows of a session's inbox file after its own last append. */
interface Known {
  ino: number;
  size: number;
  lastId: number;
  count: number;
}

/** Append text to a file (made 0600); `sync`: on disk (fdatasync) before returning. */
function appendLine(file: string, text: string, sync: boolean): void {
  const fd = fs.openSync(file, 'a', 0o600);
  try {
    const buf = Buffer.from(text);
    for (let at = 0; at < buf.length; ) at += fs.writeSync(fd, buf, at);
    if (sync) fs.fdatasyncSync(fd);
  } finally {
    fs.closeSync(fd);
  }
}

/**
 * Appends notices to sessions' inboxes. It remembers each file as its own last append left it
 * (inode, size, last id, count), so an append costs a stat and a write, not a read of up to
 * 2 × MAX_KEPT notices; a file changed by anyone else (another writer, a compaction, a deletion)
 * no longer matches and is read again.
 */
export class InboxWriter {
  private readonly known = new Map<string, Known>();

  constructor(private readonly dir: string) {}

  /** Append one notice; returns it with its id. Compacts to MAX_KEPT when twice that many are there. */
  append(session: string, notice: Omit<InboxEntry, 'id'>): InboxEntry {
    const file = fileOf(this.dir, session);
    let st: fs.Stats | undefined;
    try {
      st = fs.statSync(file);
    } catch {
      st = undefined;
    }
    const was = this.known.get(session);
    const mine = was !== undefined && st !== undefined && st.ino === was.ino && st.size === was.size;
    let lastId: number;
    let count: number;
    let torn = false;
    let entries: InboxEntry[] | undefined;
    if (mine) {
      ({ lastId, count } = was);
    } else {
      entries = readInbox(this.dir, session);
      lastId = entries.at(-1)?.id ?? 0;
      count = entries.length;
      torn = endsTorn(file);
    }
    const entry: InboxEntry = { ...notice, id: lastId + 1 };
    fs.mkdirSync(this.dir, { recursive: true, mode: 0o700 });
    if (count + 1 > 2 * MAX_KEPT) {
      entries ??= readInbox(this.dir, session);
      const kept = [...entries.slice(-(MAX_KEPT - 1)), entry];
      writeDurably(file, kept.map((e) => `${JSON.stringify(e)}\n`).join(''));
      count = kept.length;
    } else {
      // after a torn line (a crash mid-write) start on a line of our own, or the new one is torn too
      appendLine(file, `${torn ? '\n' : ''}${JSON.stringify(entry)}\n`, entry.through !== undefined);
      count += 1;
    }
    const after = fs.statSync(file);
    this.known.set(session, { ino: after.ino, size: after.size, lastId: entry.id, count });
    return entry;
  }

  /** Every readable entry of a session's inbox, oldest first. */
  read(session: string): InboxEntry[] {
    return readInbox(this.dir, session);
  }

  /** Forget a session's file (its session ended). */
  forget(session: string): void {
    this.known.delete(session);
  }
}

/** Append one notice, reading the inbox first (no memory of earlier appends). */
export function appendNotice(dir: string, session: string, notice: Omit<InboxEntry, 'id'>): InboxEntry {
  return new InboxWriter(dir).append(session, notice);
}
