/**
 * `npm start`'s link step (scripts/link-bins.js): package.json's commands linked into the user's
 * bin directory, one line said for each, and what to add to PATH when that directory is not on it.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { xdgHome } from '../util/xdg';
import { type Command, describeLink, linkCommands } from './bin-links';
import { loginStartupFile, pathAdvice } from './path-advice';

export interface LinkStep {
  /** One line per command. */
  lines: string[];
  /** What to do about PATH; empty when the bin directory is on it. */
  advice: string[];
  /** Some command could not be linked (skipped or failed). */
  incomplete: boolean;
}

/** The commands of the package at `root`, from its package.json's `bin`. */
export function packageCommands(root: string): Command[] {
  const pkg = JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8')) as { bin?: Record<string, string> };
  return Object.entries(pkg.bin ?? {}).map(([name, entryTail]) => ({ name, entryTail: path.normalize(entryTail) }));
}

export function runLinkStep(root: string, env: NodeJS.ProcessEnv): LinkStep {
  const home = env.HOME !== undefined && path.isAbsolute(env.HOME) ? env.HOME : os.homedir();
  const binDir = xdgHome('bin', env);
  const results = linkCommands(root, packageCommands(root), binDir);
  const startupFile = loginStartupFile(env.SHELL, (name) => fs.existsSync(path.join(home, name)));
  let startupText = '';
  try {
    startupText = fs.readFileSync(path.join(home, startupFile), 'utf8');
  } catch {
    // no such file yet: the advice says to create the line there
  }
  return {
    lines: results.map((r) => describeLink(r, home)),
    advice: pathAdvice({ dir: binDir, pathVar: env.PATH, home, startupFile, startupText }),
    incomplete: results.some((r) => r.error !== undefined || r.decision.action === 'skip'),
  };
}
