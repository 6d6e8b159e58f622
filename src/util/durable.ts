/**
 * Writing a file so that a crash at any instant leaves either the old content or the new, never
 * a torn one: write a temporary file beside it, fsync it, rename it over, fsync the directory.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';

export function writeDurably(file: string, text: string, mode = 0o600): void {
  const dir = path.dirname(file);
  fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
  const tmp = `${file}.${process.pid}.tmp`;
  const fd = fs.openSync(tmp, 'w', mode);
  try {
    fs.writeFileSync(fd, text);
    fs.fsyncSync(fd); // the content is on disk before the name points at it
  } finally {
    fs.closeSync(fd);
  }
  fs.renameSync(tmp, file);
  const dirFd = fs.openSync(dir, 'r');
  try {
    fs.fsyncSync(dirFd); // and so is the new name
  } finally {
    fs.closeSync(dirFd);
  }
}
