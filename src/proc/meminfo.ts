/** /proc/meminfo: what the machine has left (MemAvailable) and has (MemTotal), in bytes. */
import * as fs from 'node:fs';

export interface Meminfo {
  availableBytes: number;
  totalBytes: number;
}

/** Parse /proc/meminfo (pure); a kernel without MemAvailable (< 3.14) is named. */
export function parseMeminfo(text: string): Meminfo {
  const kb = (key: string): number => {
    const m = new RegExp(`^${key}:\\s+(\\d+) kB$`, 'm').exec(text);
    if (!m) throw new Error(`/proc/meminfo: unexpected content: no ${key} line (kernel < 3.14?)`);
    return Number(m[1]) * 1024;
  };
  return { availableBytes: kb('MemAvailable'), totalBytes: kb('MemTotal') };
}

export function readMeminfo(): Meminfo {
  return parseMeminfo(fs.readFileSync('/proc/meminfo', 'utf8'));
}
