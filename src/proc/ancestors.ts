/**
 * The chain of a process's ancestors (parent, grandparent, ... up to pid 1), for "never signal
 * the caller": sbctl run from a shell inside a checkout must not stop that shell, nor the shell,
 * terminal or user manager above it.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { parseStat } from './stat';

/** More links than any real chain of parents has: a cycle in bad input ends the walk here. */
const MAX_CHAIN = 4096;

/**
 * The ancestors of `pid`, nearest first: its parent, that one's parent, ... up to and with pid 1,
 * following `parentOf` (undefined: unknown or gone, which ends the chain; 0: no parent). Pure.
 */
export function ancestorChain(pid: number, parentOf: (pid: number) => number | undefined): number[] {
  const chain: number[] = [];
  const seen = new Set<number>([pid]);
  for (let p = parentOf(pid); p !== undefined && p > 0 && !seen.has(p) && chain.length < MAX_CHAIN; p = parentOf(p)) {
    chain.push(p);
    seen.add(p);
  }
  return chain;
}

/** The parent pid from /proc/<pid>/stat, or undefined when the process is gone. */
export function parentPid(pid: number, procRoot = '/proc'): number | undefined {
  const file = path.join(procRoot, String(pid), 'stat');
  try {
    return parseStat(fs.readFileSync(file, 'utf8'), file).ppid;
  } catch {
    return undefined;
  }
}

/** This process's ancestors, read from /proc: nearest first. */
export function ownAncestors(procRoot = '/proc'): number[] {
  return ancestorChain(process.pid, (p) => parentPid(p, procRoot));
}
