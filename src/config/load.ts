/** Reading the config file, with errors that name the file, the key, what was expected and what was found. */
import * as fs from 'node:fs';
import type { z } from 'zod';
import { type Config, configSchema } from './schema';

/** The config file could not be used. The service refuses to start (exit code 2). */
export class ConfigError extends Error {
  readonly file: string;
  constructor(file: string, detail: string) {
    super(`${file}: ${detail}`);
    this.name = 'ConfigError';
    this.file = file;
  }
}

export { defaultConfigPath } from './path';

function describe(value: unknown): string {
  if (value === undefined) return 'nothing';
  const json = JSON.stringify(value);
  return json.length > 60 ? `${json.slice(0, 57)}...` : json;
}

function valueAt(root: unknown, keyPath: readonly PropertyKey[]): unknown {
  let v: unknown = root;
  for (const k of keyPath) v = v !== null && typeof v === 'object' ? (v as Record<PropertyKey, unknown>)[k] : undefined;
  return v;
}

/** What an issue wanted, in words. */
function expected(issue: z.core.$ZodIssue): string {
  switch (issue.code) {
    case 'invalid_type':
      return issue.expected === 'array' ? 'a list' : `a ${issue.expected}`;
    case 'too_big':
      return `a value ${issue.inclusive ? 'at most' : 'below'} ${String(issue.maximum)}`;
    case 'too_small':
      return issue.origin === 'array' ? `at least ${String(issue.minimum)} entries` : `a value ${issue.inclusive ? 'at least' : 'above'} ${String(issue.minimum)}`;
    default:
      return issue.message;
  }
}

function formatIssue(raw: unknown, issue: z.core.$ZodIssue): string {
  const key = issue.path.length > 0 ? issue.path.map(String).join('.') : '(top level)';
  if (issue.code === 'unrecognized_keys') {
    return `${key === '(top level)' ? '' : `${key}: `}unknown key${issue.keys.length > 1 ? 's' : ''} ${issue.keys.map((k) => `"${k}"`).join(', ')} (misspelt?)`;
  }
  return `key "${key}": expected ${expected(issue)}; found ${describe(valueAt(raw, issue.path))}`;
}

/** Validate an already-parsed config object. `file` names where it came from. */
export function parseConfig(raw: unknown, file: string): Config {
  const result = configSchema.safeParse(raw);
  if (!result.success) throw new ConfigError(file, result.error.issues.map((i) => formatIssue(raw, i)).join('; '));
  return result.data;
}

/**
 * Load the config. A missing file at the default path means all defaults; a missing file that
 * was asked for by name is an error.
 */
export function loadConfig(file: string, explicit: boolean): Config {
  let text: string;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' && !explicit) return parseConfig({}, file);
    throw new ConfigError(file, `cannot read it (${code ?? String(err)})`);
  }
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (err) {
    throw new ConfigError(file, `not valid JSON: ${(err as Error).message}`);
  }
  return parseConfig(raw, file);
}
