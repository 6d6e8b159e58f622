/**
 * A held file's whole text, read again from its start with positioned reads: procfs and kernfs
 * build a /proc/PID/stat or a cgroup file anew on a read from offset 0 (seq_file), so one pread of
 * an fd held open is as fresh as a new open, for one syscall instead of readFileSync's five.
 * Errors are thrown as the syscall gave them (ESRCH: the process exited; ENODEV: the cgroup was
 * removed); the caller names what they mean.
 */
import * as fs from 'node:fs';

/** One buffer for every read, grown when a file is longer: sbd is one thread, and the text is
 * decoded at once. 8 KiB holds every cgroup file sbd reads and any /proc stat line. */
let buffer = Buffer.allocUnsafe(8192);

/** The text of `fd` from offset 0 to its end, decoded as `encoding`. */
export function readAgain(fd: number, encoding: 'latin1' | 'utf8'): string {
  let n = fs.readSync(fd, buffer, 0, buffer.length, 0);
  while (n === buffer.length) { // longer than the buffer: grow it, and read the rest
    const bigger = Buffer.allocUnsafe(buffer.length * 2);
    buffer.copy(bigger, 0, 0, n);
    buffer = bigger;
    n += fs.readSync(fd, buffer, n, buffer.length - n, n);
  }
  return buffer.toString(encoding, 0, n);
}
