/**
 * `npm start`'s link step: sbctl and sbd as symlinks in the user's bin directory (~/.local/bin,
 * or $XDG_BIN_HOME), pointing at this copy's entry points. What is at each place now is gathered
 * first (inspectPlace), the decision is pure (decideLink), then it is carried out (linkCommands).
 * Never overwrites what is not sessionbrake's own link: a file, a directory, a link to another
 * program are left alone and said.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';

/** What is at a command's place in the bin directory now. */
export type Place =
  | { kind: 'absent' }
  /** A symlink: `target` as written, made absolute against the link's directory; `real` its
   * real path, undefined when the link is dangling; `sessionbrake`: it is a sessionbrake
   * entry point of the same command (its package.json says so, or, dangling, its path ends so). */
  | { kind: 'link'; target: string; real: string | undefined; sessionbrake: boolean }
  | { kind: 'other'; what: 'file' | 'directory' | 'special file' };

export type LinkDecision =
  | { action: 'create' }
  /** Already links to this entry point. */
  | { action: 'keep' }
  /** sessionbrake's own link, to a copy that is gone (`stale`) or to another copy (`other-copy`). */
  | { action: 'replace'; was: string; why: 'stale' | 'other-copy' }
  | { action: 'skip'; why: string };

/**
 * What to do at a command's place, for the entry point `entry` (a real path). Another copy's
 * link is replaced: `npm start` also points the unit at this copy, so the commands and the
 * service agree on which sessionbrake runs.
 */
export function decideLink(place: Place, entry: string): LinkDecision {
  switch (place.kind) {
    case 'absent':
      return { action: 'create' };
    case 'other':
      return { action: 'skip', why: `a ${place.what}, not sessionbrake's link` };
    case 'link':
      if (place.real === entry) return { action: 'keep' };
      if (!place.sessionbrake) {
        return { action: 'skip', why: `a link to ${place.target}${place.real === undefined ? ' (dangling)' : ''}, not to sessionbrake` };
      }
      return { action: 'replace', was: place.target, why: place.real === undefined ? 'stale' : 'other-copy' };
  }
}

/** What is at `file` now; `entryTail` is the command's entry point below its package root (dist/cli/main.js). */
export function inspectPlace(file: string, entryTail: string): Place {
  let st: fs.Stats;
  try {
    st = fs.lstatSync(file);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return { kind: 'absent' };
    throw err;
  }
  if (!st.isSymbolicLink()) return { kind: 'other', what: st.isFile() ? 'file' : st.isDirectory() ? 'directory' : 'special file' };
  const target = path.resolve(path.dirname(file), fs.readlinkSync(file));
  let real: string | undefined;
  try {
    real = fs.realpathSync(file);
  } catch {
    real = undefined;
  }
  const tail = path.sep + entryTail;
  const sessionbrake = real === undefined ? target.endsWith(tail) : real.endsWith(tail) && packageName(real.slice(0, -tail.length)) === 'sessionbrake';
  return { kind: 'link', target, real, sessionbrake };
}

function packageName(root: string): string | undefined {
  try {
    return (JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8')) as { name?: string }).name;
  } catch {
    return undefined;
  }
}

export interface Command {
  /** The command's name (sbctl). */
  name: string;
  /** Its entry point below the package root (dist/cli/main.js), as package.json's `bin` says. */
  entryTail: string;
}

export interface LinkResult {
  name: string;
  file: string;
  entry: string;
  decision: LinkDecision;
  /** Set when the decision could not be carried out (the entry point cannot be made executable, …). */
  error?: string;
}

/**
 * Links each command into `binDir` (created when missing) to its entry point below `root`,
 * making the entry point executable first (tsc writes its files without the x bits).
 */
export function linkCommands(root: string, commands: readonly Command[], binDir: string): LinkResult[] {
  const realRoot = fs.realpathSync(root);
  fs.mkdirSync(binDir, { recursive: true });
  return commands.map(({ name, entryTail }) => {
    const file = path.join(binDir, name);
    const entry = path.join(realRoot, entryTail);
    const decision = decideLink(inspectPlace(file, entryTail), entry);
    const result: LinkResult = { name, file, entry, decision };
    if (decision.action === 'skip') return result;
    try {
      makeExecutable(entry);
      if (decision.action === 'create') fs.symlinkSync(entry, file);
      if (decision.action === 'replace') {
        // A new link beside it, renamed over the old one: the command is never missing.
        const tmp = `${file}.sessionbrake-${process.pid}`;
        fs.rmSync(tmp, { force: true });
        fs.symlinkSync(entry, tmp);
        fs.renameSync(tmp, file);
      }
    } catch (err) {
      const e = err as NodeJS.ErrnoException;
      result.error = `${e.syscall ?? 'link'} ${e.path ?? file}: ${e.code ?? e.message}`;
    }
    return result;
  });
}

/** chmod +x where readable (a+x for a+r), as npm does for the bins it links. */
function makeExecutable(file: string): void {
  const mode = fs.statSync(file).mode & 0o7777;
  const wanted = mode | ((mode & 0o444) >> 2);
  if (wanted !== mode) fs.chmodSync(file, wanted);
}

/** One line per command, for the screen; `home` shortens paths to ~/…. */
export function describeLink(r: LinkResult, home: string): string {
  const show = (p: string): string => (home !== '' && p.startsWith(home + path.sep) ? `~${p.slice(home.length)}` : p);
  const file = show(r.file);
  if (r.error !== undefined) return `${file}: not linked: ${r.error}`;
  switch (r.decision.action) {
    case 'create':
      return `linked ${file} -> ${r.entry}`;
    case 'keep':
      return `${file} already links to ${r.entry}`;
    case 'replace':
      return r.decision.why === 'stale'
        ? `linked ${file} -> ${r.entry} (it linked to ${r.decision.was}, which is gone)`
        : `linked ${file} -> ${r.entry} (it linked to another copy, ${r.decision.was})`;
    case 'skip':
      return `${file} is ${r.decision.why}: left alone (remove it and run npm start again to link ${r.name} there)`;
  }
}
