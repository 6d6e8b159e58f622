/**
 * Thin readers for the slice detector: one SliceSample from the slice's cgroup files, its members'
 * (every cgroup below it, nested slices and their units too) and /proc/meminfo.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { parseFlatKeyed, parseLimit, parseRequiredKeys } from '../cgroup/parse';
import { CgroupGoneError, fullStallUsOf, readCgroupFile, readCurrentBytes, readOptional } from '../cgroup/read';
import { readMeminfo } from '../proc/meminfo';
import type { MemberSample, SliceSample } from './detector';

/** Nested slices deeper than this are counted with their parent member (systemd nests by dashes, rarely deep). */
const MEMBER_DEPTH = 3;

/**
 * A member's figures from elsewhere than a read of its files by path, or undefined to read them:
 * its session feed's last sample when fresh, or the files its feed holds open
 * (daemon/slice-arbiter.ts). In a storm every member's feed is awake and has just read the same
 * two files the slice would read again (issue 15, item 5: the slice's member reads were a fifth
 * of sbd's CPU). `sizesOnly`: only memory.current is wanted (fullUs may be anything).
 */
export type MemberFigures = (dir: string, sizesOnly: boolean) => { atMs: number; currentBytes: number; fullUs: number } | undefined;

/** A member's figures (its pressure too unless `sizesOnly`); undefined when it vanished between the listing and the read. */
function readMember(dir: string, rel: string, sizesOnly: boolean, known?: MemberFigures): MemberSample | undefined {
  const fromFeed = known?.(dir, sizesOnly);
  if (fromFeed) return { path: rel, currentBytes: fromFeed.currentBytes, fullUs: sizesOnly ? 0 : fromFeed.fullUs, atMs: fromFeed.atMs };
  try {
    const current = readCurrentBytes(dir);
    const pressure = sizesOnly ? undefined : readOptional(dir, 'memory.pressure');
    return { path: rel, currentBytes: current, fullUs: fullStallUsOf(pressure, dir) };
  } catch (err) {
    if (err instanceof CgroupGoneError) return undefined;
    throw err;
  }
}

/**
 * Every cgroup below `sliceDir`, as paths relative to it. `sizesOnly`: their memory.current
 * alone (fullUs 0), for the culprit's baseline, which needs nothing else: half the reads, on a
 * tick that reads every member of a slice of a thousand sessions. The paths are joined as they
 * are (the slice's directory and the names the kernel lists): path.join's normalising cost as
 * much as a third of the reads. `known`: members whose figures are known already (MemberFigures).
 */
export function readMembers(sliceDir: string, sizesOnly = false, known?: MemberFigures): MemberSample[] {
  const root = sliceDir.endsWith('/') ? sliceDir.slice(0, -1) : sliceDir;
  const out: MemberSample[] = [];
  for (const rel of listMembers(root)) {
    const m = readMember(`${root}/${rel}`, rel, sizesOnly, known);
    if (m) out.push(m); // undefined: gone between the listing and the read
  }
  return out;
}

/**
 * Every cgroup below `sliceDir` (nested slices' units too, to MEMBER_DEPTH), as paths relative to
 * it, without reading their files: what readMembers reads, and the listing a steady slice's note
 * is checked against (detector.ts, redateNote).
 */
export function listMembers(sliceDir: string): string[] {
  const out: string[] = [];
  const root = sliceDir.endsWith('/') ? sliceDir.slice(0, -1) : sliceDir;
  const walk = (rel: string, depth: number): void => {
    let entries: fs.Dirent[];
    try {
      entries = fs.readdirSync(rel === '' ? root : `${root}/${rel}`, { withFileTypes: true });
    } catch {
      return; // gone meanwhile
    }
    for (const e of entries) {
      if (!e.isDirectory()) continue;
      const child = rel === '' ? e.name : `${rel}/${e.name}`;
      out.push(child);
      if (e.name.endsWith('.slice') && depth < MEMBER_DEPTH) walk(child, depth + 1);
    }
  };
  walk('', 1);
  return out;
}

/**
 * One sample of the slice at `sliceDir`. Throws CgroupGoneError when the slice is gone.
 * `membersPressure` decides, from the slice's own figures, whether the members' memory.pressure
 * is read too (membersPressureNeeded); without it, always. `known`: members' figures known already.
 */
export function readSliceSample(sliceDir: string, atMs: number, membersPressure?: (own: Omit<SliceSample, 'members'>) => boolean, known?: MemberFigures): SliceSample {
  const f = (name: string): string => readCgroupFile(sliceDir, name);
  const stat = parseRequiredKeys(f('memory.stat'), path.join(sliceDir, 'memory.stat'), ['anon', 'shmem'] as const);
  const events = parseFlatKeyed(f('memory.events.local'), path.join(sliceDir, 'memory.events.local'));
  const mem = readMeminfo();
  const own: Omit<SliceSample, 'members'> = {
    atMs,
    currentBytes: readCurrentBytes(sliceDir),
    highBytes: parseLimit(f('memory.high'), path.join(sliceDir, 'memory.high')),
    maxBytes: parseLimit(f('memory.max'), path.join(sliceDir, 'memory.max')),
    anonBytes: stat.anon,
    shmemBytes: stat.shmem,
    highEvents: events.high ?? 0,
    maxEvents: events.max ?? 0,
    memAvailableBytes: mem.availableBytes,
    memTotalBytes: mem.totalBytes,
    psi: fs.existsSync(path.join(sliceDir, 'memory.pressure')), // absent on a kernel without PSI
  };
  const withPressure = membersPressure === undefined || membersPressure(own);
  return { ...own, members: readMembers(sliceDir, !withPressure, known), ...(withPressure ? {} : { membersPressure: false }) };
}
