/**
 * Whether a directory is on $PATH, and what to do when it is not: the line to add to the login
 * shell's startup file. Pure: the caller reads the environment and the startup file.
 */
import * as path from 'node:path';

/** Whether `dir` is one of $PATH's entries (trailing slashes and `.`/`..` segments aside). */
export function dirOnPath(dir: string, pathVar: string | undefined): boolean {
  const want = path.resolve(dir);
  return (pathVar ?? '').split(':').some((entry) => entry !== '' && path.isAbsolute(entry) && path.resolve(entry) === want);
}

/**
 * The login shell's startup file that sets PATH, as the shell reads them: zsh's ~/.zprofile;
 * bash's ~/.bash_profile, else ~/.bash_login, else ~/.profile (bash reads only the first that
 * exists); ~/.profile for any other sh. `exists` answers for a name below the home directory.
 */
export function loginStartupFile(shell: string | undefined, exists: (name: string) => boolean): string {
  const name = path.basename(shell ?? '');
  if (name === 'zsh') return '.zprofile';
  if (name === 'bash') return ['.bash_profile', '.bash_login'].find(exists) ?? '.profile';
  return '.profile';
}

/** `dir` as the shell line would say it: $HOME/… below the home directory. */
export function shellPath(dir: string, home: string): string {
  return home !== '' && dir.startsWith(home + path.sep) ? `$HOME${dir.slice(home.length)}` : dir;
}

/** Whether the startup file's text already puts `dir` on PATH (Debian's ~/.profile does for ~/.local/bin, when it exists at login). */
export function startupMentions(text: string, dir: string, home: string): boolean {
  const forms = [dir, shellPath(dir, home), shellPath(dir, home).replace(/^\$HOME/, '${HOME}'), shellPath(dir, home).replace(/^\$HOME/, '~')];
  return text.split('\n').some((line) => !line.trimStart().startsWith('#') && /\bPATH\b/.test(line) && forms.some((f) => line.includes(f)));
}

export interface PathFacts {
  /** The directory the commands are in. */
  dir: string;
  pathVar: string | undefined;
  home: string;
  /** The login startup file below home (loginStartupFile). */
  startupFile: string;
  /** Its text, '' when it does not exist. */
  startupText: string;
}

/** Nothing when `dir` is on PATH; else the lines that say what to do. */
export function pathAdvice(f: PathFacts): string[] {
  if (dirOnPath(f.dir, f.pathVar)) return [];
  const shown = f.home !== '' && f.dir.startsWith(f.home + path.sep) ? `~${f.dir.slice(f.home.length)}` : f.dir;
  const line = `export PATH="${shellPath(f.dir, f.home)}:$PATH"`;
  if (startupMentions(f.startupText, f.dir, f.home)) {
    return [
      `${shown} is not on your PATH yet: your ~/${f.startupFile} puts it there when you log in, now that it exists.`,
      `Log in again, or run this in the shells you have open: ${line}`,
    ];
  }
  return [
    `${shown} is not on your PATH: add this line to ~/${f.startupFile}, then log in again:`,
    `  ${line}`,
  ];
}
