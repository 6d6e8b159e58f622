/**
 * The textfile for node_exporter's textfile collector: written whole into a temporary file in
 * the same directory (a name node_exporter does not read: it reads *.prom only), fsynced, then
 * renamed over the old one, so that a scrape reads the old file or the new one, never half of
 * either. Mode 0644 whatever sbd's umask (its unit has UMask=0077): node_exporter runs as another
 * user. The directory is not fsynced: after a crash an older file is as good, and it goes stale.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';

/** Readable by node_exporter (another user), writable by sbd alone. */
export const TEXTFILE_MODE = 0o644;

/** The temporary file beside `name`: hidden, and not ending in .prom. */
export const tempName = (name: string, pid = process.pid): string => `.${name}.${pid}.tmp`;

/** Write `text` to dir/name atomically (see above). Throws the failing call's error. */
export function writeTextfile(dir: string, name: string, text: string): void {
  const tmp = path.join(dir, tempName(name));
  const fd = fs.openSync(tmp, 'w', TEXTFILE_MODE);
  try {
    fs.fchmodSync(fd, TEXTFILE_MODE); // the umask took bits off at open
    fs.writeFileSync(fd, text);
    fs.fsyncSync(fd); // the content is on disk before the name points at it
  } catch (err) {
    fs.closeSync(fd);
    fs.rmSync(tmp, { force: true });
    throw err;
  }
  fs.closeSync(fd);
  try {
    fs.renameSync(tmp, path.join(dir, name));
  } catch (err) {
    fs.rmSync(tmp, { force: true });
    throw err;
  }
}

/**
 * Why the textfile cannot be written, and what mends it, in one sentence naming the directory
 * (pure). `user` is the user sbd runs as.
 */
export function textfileProblem(err: unknown, dir: string, name: string, user: string): string {
  const code = (err as NodeJS.ErrnoException | undefined)?.code;
  const where = `metrics.textfileDirectory ${dir}`;
  switch (code) {
    case 'ENOENT':
      return `${where} does not exist: create it (it is node_exporter's --collector.textfile.directory) and let ${user} write to it, or point metrics.textfileDirectory at that directory; sbd goes on without its textfile`;
    case 'EACCES':
    case 'EPERM':
      return `${where} is not writable by ${user} (or ${name} there belongs to someone else): let ${user} write to it, e.g. a group of the sbd users: chgrp sessionbrake ${dir} && chmod 1775 ${dir} (the sticky bit keeps each user's file their own); sbd goes on without its textfile`;
    case 'ENOTDIR':
      return `${where} is not a directory: point metrics.textfileDirectory at node_exporter's --collector.textfile.directory; sbd goes on without its textfile`;
    case 'EROFS':
      return `${where} is on a read-only file system: choose a writable directory and give it to node_exporter as --collector.textfile.directory; sbd goes on without its textfile`;
    case 'ENOSPC':
    case 'EDQUOT':
      return `${where} has no room left (${code}): free some; sbd goes on without its textfile`;
    default:
      return `cannot write ${path.join(dir, name)}: ${code ?? ''} ${(err as Error | undefined)?.message ?? String(err)}`.replace(/\s+/g, ' ').trim() + '; sbd goes on without its textfile';
  }
}
