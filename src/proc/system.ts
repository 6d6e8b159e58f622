/**
 * Figures of the running kernel that /proc reports in units: the page size (rss in
 * /proc/PID/stat, memory.high's rounding) and clock ticks per second (utime, starttime). Read
 * once from the ELF auxiliary vector the kernel handed this process (AT_PAGESZ, AT_CLKTCK):
 * arm64 kernels run with 4K, 16K or 64K pages, so no constant is right everywhere.
 */
import * as fs from 'node:fs';

/** auxv keys (include/uapi/linux/auxvec.h). */
const AT_NULL = 0n;
const AT_PAGESZ = 6n;
const AT_CLKTCK = 17n;
/** auxv entries are two unsigned longs: 8 bytes each on the 64-bit platforms Node runs on here. */
const WORD = 8;

export interface SystemFigures {
  pageSize: number;
  clockTicks: number;
}

/** Parse an auxv image (pure); an error names `file` and what is wrong. */
export function parseAuxv(buf: Buffer, file: string): SystemFigures {
  let pageSize: number | undefined;
  let clockTicks: number | undefined;
  let ended = false;
  for (let off = 0; off + 2 * WORD <= buf.length; off += 2 * WORD) {
    const key = buf.readBigUInt64LE(off);
    const value = Number(buf.readBigUInt64LE(off + WORD));
    if (key === AT_NULL) {
      ended = true;
      break;
    }
    if (key === AT_PAGESZ) pageSize = value;
    if (key === AT_CLKTCK) clockTicks = value;
  }
  if (!ended) throw new Error(`${file}: cut off (no AT_NULL entry in ${buf.length} bytes)`);
  if (pageSize === undefined) throw new Error(`${file}: no AT_PAGESZ entry`);
  if (clockTicks === undefined) throw new Error(`${file}: no AT_CLKTCK entry`);
  if (pageSize < 4096 || (pageSize & (pageSize - 1)) !== 0) throw new Error(`${file}: page size ${pageSize} is not a power of two of at least 4096`);
  if (clockTicks <= 0) throw new Error(`${file}: clock ticks ${clockTicks} per second`);
  return { pageSize, clockTicks };
}

let figures: SystemFigures | undefined;

function system(): SystemFigures {
  figures ??= parseAuxv(fs.readFileSync('/proc/self/auxv'), '/proc/self/auxv');
  return figures;
}

/** Bytes per page of the running kernel. */
export const systemPageSize = (): number => system().pageSize;
/** Clock ticks per second (USER_HZ) of the running kernel. */
export const systemClockTicks = (): number => system().clockTicks;
