/** Finding a program as a shell would, without a shell. */
import * as fs from 'node:fs';
import * as path from 'node:path';

/** The program's absolute path on `PATH` (an executable regular file), or undefined. */
export function onPath(name: string, pathVar: string | undefined): string | undefined {
  if (name.includes('/')) return path.isAbsolute(name) ? name : undefined;
  for (const dir of (pathVar ?? '').split(':').filter((d) => path.isAbsolute(d))) {
    const candidate = path.join(dir, name);
    try {
      fs.accessSync(candidate, fs.constants.X_OK);
      if (fs.statSync(candidate).isFile()) return candidate;
    } catch {
      /* not here */
    }
  }
  return undefined;
}
