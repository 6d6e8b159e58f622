/**
 * A file monitor (issue 13): a file's state (exists, size, its last lines), watched by the
 * addon's inotify FileWatch, never polled: the file itself (its writes) and its directory's
 * entries (so a file that does not exist yet is seen when it is created or moved in, and seen
 * to go). Events within coalesceSeconds make one look at the file and at most one notice
 * (monitor/file-state.ts decides what to tell). After a restart it looks again at once: what
 * changed while sbd was away is told once.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { type FileLook, fileChange, lastLinesOf, lookOf } from '../file-state';
import { compileMatchers } from '../notices';
import { MonitorRequestError, type Runner, type RunnerKit } from '../runner';
import { OUTPUT_CAP_BYTES } from '../spec';
import type { MonitorRecord } from '../store';
import { perKit } from './state';

/** Read what the file is now: a regular file's size and last lines (read from its end, at most OUTPUT_CAP_BYTES); another kind of file, or one sbd may not read, only its size. */
export function lookAt(file: string, lastLines: number, matchers: readonly RegExp[]): FileLook {
  let fd: number;
  try {
    fd = fs.openSync(file, fs.constants.O_RDONLY | fs.constants.O_NONBLOCK);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'ENOTDIR') return lookOf(undefined, matchers);
    if (code !== 'EACCES' && code !== 'EPERM') throw err;
    try {
      return lookOf({ size: fs.statSync(file).size, lines: [] }, matchers); // there, not readable: its size only
    } catch {
      return lookOf(undefined, matchers);
    }
  }
  try {
    const st = fs.fstatSync(fd);
    if (!st.isFile() || lastLines === 0) return lookOf({ size: st.size, lines: [] }, matchers); // a fifo or device is never read
    const n = Math.min(st.size, OUTPUT_CAP_BYTES);
    const buf = Buffer.alloc(n);
    const got = fs.readSync(fd, buf, 0, n, st.size - n);
    return lookOf({ size: st.size, lines: lastLinesOf(buf.subarray(0, got).toString('utf8'), lastLines, st.size - n === 0) }, matchers);
  } finally {
    fs.closeSync(fd);
  }
}

interface Watching {
  timer?: NodeJS.Timeout | undefined;
  /** The file went during this span (it may be back: then it was replaced). */
  went: boolean;
}
const watching = perKit<Watching>();

const fileOf = (r: MonitorRecord): string => (r.spec.type === 'file' ? r.spec.path : '');

function watchFileItself(kit: RunnerKit, id: string, file: string): void {
  try {
    kit.watch(id, file); // its writes; again after a replace (a new inode)
  } catch {
    /* not there (yet): its directory's entries tell when it comes */
  }
}

/** Look now and tell what changed since the last look. */
function look(kit: RunnerKit, id: string): void {
  const w = watching(kit).get(id);
  const r = kit.get(id);
  if (!w || !r || r.lifecycle !== 'running' || r.spec.type !== 'file') return;
  w.timer = undefined;
  const replaced = w.went;
  w.went = false;
  const matchers = compileMatchers(r.spec);
  let now: FileLook;
  try {
    now = lookAt(r.spec.path, r.spec.lastLines, matchers);
  } catch (err) {
    kit.host.log('warn', 'cannot read a monitored file', { monitor: id, file: r.spec.path, err });
    return;
  }
  if (now.state.exists) watchFileItself(kit, id, r.spec.path);
  const notice = fileChange(r.fileState, now, matchers, r.spec.maxLines, replaced);
  kit.save({ ...r, fileState: now.state, ticks: r.ticks + 1 });
  if (!notice) return;
  const name = r.spec.label ?? kit.handle(id);
  kit.host.notify(r.sessionId, { atMs: Date.now(), from: kit.handle(id), kind: notice.kind, text: `${name}: ${notice.text}`, ...(notice.lines.length ? { lines: notice.lines } : {}) });
}

function start(kit: RunnerKit, r: MonitorRecord): void {
  const file = fileOf(r);
  watching(kit).set(r.id, { went: false });
  kit.watch(r.id, path.dirname(file), { entries: true });
  watchFileItself(kit, r.id, file);
}

function end(kit: RunnerKit, r: MonitorRecord): void {
  const w = watching(kit).get(r.id);
  if (w?.timer) clearTimeout(w.timer);
  watching(kit).delete(r.id);
  const file = fileOf(r);
  kit.unwatch(r.id, file);
  kit.unwatch(r.id, path.dirname(file));
}

export const fileRunner: Runner = {
  async begin(kit, record) {
    if (record.spec.type !== 'file') return;
    const dir = path.dirname(record.spec.path);
    try {
      start(kit, record);
    } catch (err) {
      end(kit, record);
      const code = (err as NodeJS.ErrnoException).code;
      const why = code === 'ENOENT'
        ? `the directory ${dir} does not exist: a file monitor watches the file's directory for it to come`
        : code === 'ENOTDIR' ? `${dir} is not a directory` : `cannot watch the directory ${dir} (${code ?? (err as Error).message})`;
      kit.save({ ...record, lifecycle: 'gone', reason: why });
      throw new MonitorRequestError(why);
    }
    const matchers = compileMatchers(record.spec);
    kit.save({ ...record, fileState: lookAt(record.spec.path, record.spec.lastLines, matchers).state }); // the state it starts from: nothing told
  },
  resume(kit, record) {
    if (record.spec.type !== 'file') return;
    try {
      start(kit, record);
    } catch (err) {
      end(kit, record);
      const reason = `its directory ${path.dirname(record.spec.path)} cannot be watched any more (${(err as NodeJS.ErrnoException).code ?? 'error'})`;
      kit.save({ ...record, lifecycle: 'gone', reason });
      kit.tell(record, 'gone', reason);
      return;
    }
    look(kit, record.id); // what changed while sbd was away, told once
  },
  async stop(kit, record) {
    end(kit, record);
  },
  onFile(kit, record, file, kind) {
    if (record.spec.type !== 'file') return;
    if (file === path.dirname(record.spec.path)) {
      if (kind !== 'gone') return;
      end(kit, record);
      const reason = `its directory ${file} went away: no longer watched`;
      kit.save({ ...record, lifecycle: 'gone', reason });
      kit.tell(record, 'gone', reason);
      return;
    }
    const w = watching(kit).get(record.id);
    if (!w) return;
    if (kind === 'gone') w.went = true;
    if (w.timer) return; // the span is open: one look at its end
    w.timer = setTimeout(() => {
      try {
        look(kit, record.id);
      } catch (err) {
        kit.host.log('warn', 'looking at a monitored file failed', { monitor: record.id, err });
      }
    }, record.spec.coalesceSeconds * 1000);
    w.timer.unref();
  },
  close(kit) {
    for (const w of watching(kit).values()) if (w.timer) clearTimeout(w.timer);
    watching(kit).clear();
  },
};
