/** Machine-wide figures the brake policy needs: MemAvailable, a slice's brake and its members. */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { parseLimit } from '../cgroup/parse';
import { readCurrentBytes } from '../cgroup/read';
import { parseMeminfo, readMeminfo } from '../proc/meminfo';

/** /proc/meminfo MemAvailable in bytes. */
export const parseMemAvailable = (text: string): number => parseMeminfo(text).availableBytes;

export function memAvailable(): number {
  return readMeminfo().availableBytes;
}

/** The slice's brake (its own memory.high; Infinity when unset or unreadable). */
export function sliceHigh(sliceDir: string): number {
  try {
    return parseLimit(fs.readFileSync(path.join(sliceDir, 'memory.high'), 'utf8'), path.join(sliceDir, 'memory.high'));
  } catch {
    return Infinity;
  }
}

/** memory.current of a cgroup; undefined when it cannot be read (gone). */
function readCurrent(dir: string): number | undefined {
  try {
    return readCurrentBytes(dir);
  } catch {
    return undefined;
  }
}

/** memory.current of a cgroup, 0 when it is gone. */
export function currentOf(dir: string): number {
  return readCurrent(dir) ?? 0;
}

/**
 * How many cgroups share the slice's brake: its child directories, one per unit (a session, any
 * other scope or service, a nested slice), whether sbd watches it or not; undefined when the
 * slice cannot be read. A neighbour sbd has not adopted yet, or one in a nested slice, still
 * makes a session not alone.
 */
export function cgroupsInSlice(sliceDir: string): number | undefined {
  try {
    return fs.readdirSync(sliceDir, { withFileTypes: true }).filter((d) => d.isDirectory()).length;
  } catch {
    return undefined;
  }
}

/** What the slice's other members use, sessions or not: its memory.current less this session's;
 * undefined when the slice's memory.current cannot be read. */
export function othersInSlice(sliceDir: string, ownBytes: number): number | undefined {
  const slice = readCurrent(sliceDir);
  return slice === undefined ? undefined : Math.max(0, slice - ownBytes);
}
