/**
 * The XDG base directories (XDG Base Directory Specification 0.8): $XDG_CONFIG_HOME, else
 * ~/.config; $XDG_STATE_HOME, else ~/.local/state; and where a user's own commands go:
 * ~/.local/bin, which the specification and systemd's file-hierarchy(7) name, or $XDG_BIN_HOME
 * (not in the specification; a proposed addition that uv and others honour). A value that is
 * empty or not absolute is ignored, as the specification says ("If an implementation encounters
 * a relative path in any of these variables it should consider the path invalid and ignore it").
 */
import * as os from 'node:os';
import * as path from 'node:path';

const FALLBACK = { config: ['.config'], state: ['.local', 'state'], bin: ['.local', 'bin'] } as const;
const VARIABLE = { config: 'XDG_CONFIG_HOME', state: 'XDG_STATE_HOME', bin: 'XDG_BIN_HOME' } as const;

export type XdgKind = keyof typeof FALLBACK;

/** The base directory of `kind` for the environment `env` (pure apart from the home lookup). */
export function xdgHome(kind: XdgKind, env: NodeJS.ProcessEnv = process.env): string {
  const value = env[VARIABLE[kind]];
  if (value !== undefined && path.isAbsolute(value)) return value;
  const home = env.HOME !== undefined && path.isAbsolute(env.HOME) ? env.HOME : os.homedir();
  return path.join(home, ...FALLBACK[kind]);
}
