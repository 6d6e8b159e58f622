/**
 * Reading what was appended to a tailed file since the last look (issue 13), by byte offset, so
 * that a restarted sbd resumes where it stopped (the offset is in the monitor's record):
 *  - only whole lines are taken; a line still being written waits for its newline;
 *  - a file that got shorter was truncated or replaced (log rotation): read from its start, and say so;
 *  - at most `maxBytes` are read in one look; the rest is skipped and counted (a truncation
 *    receipt), so a log that grows by gigabytes never costs more than a cap.
 */
import * as fs from 'node:fs';

export interface TailRead {
  lines: string[];
  /** Where the next look starts. */
  offset: number;
  /** Bytes appended but skipped over (beyond maxBytes). */
  skippedBytes: number;
  /** The file was shorter than the offset: truncated or replaced, read from its start. */
  restarted: boolean;
  /** The file does not exist (yet, or any more). */
  missing: boolean;
}

export function readAppended(file: string, offset: number, maxBytes: number): TailRead {
  let fd: number;
  try {
    fd = fs.openSync(file, 'r');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return { lines: [], offset, skippedBytes: 0, restarted: false, missing: true };
    throw err;
  }
  try {
    const size = fs.fstatSync(fd).size;
    const restarted = size < offset;
    let from = restarted ? 0 : offset;
    let skippedBytes = 0;
    if (size - from > maxBytes) {
      skippedBytes = size - from - maxBytes;
      from = size - maxBytes;
    }
    const buf = Buffer.alloc(size - from);
    const n = buf.length > 0 ? fs.readSync(fd, buf, 0, buf.length, from) : 0;
    const text = buf.subarray(0, n);
    const lastNewline = text.lastIndexOf(0x0a);
    if (lastNewline < 0) {
      // no whole line yet: wait for its newline
      return { lines: [], offset: from, skippedBytes, restarted, missing: false };
    }
    let whole = text.subarray(0, lastNewline).toString('utf8').split('\n');
    // after a skip the first line is a tail of a line: not a line of its own
    if (skippedBytes > 0) {
      skippedBytes += Buffer.byteLength(whole[0] ?? '') + 1;
      whole = whole.slice(1);
    }
    return { lines: whole.map((l) => (l.endsWith('\r') ? l.slice(0, -1) : l)), offset: from + lastNewline + 1, skippedBytes, restarted, missing: false };
  } finally {
    fs.closeSync(fd);
  }
}
