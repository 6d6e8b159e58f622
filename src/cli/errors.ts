/** Errors of the command line, each with the exit code it ends the program with. */

/** Bad arguments or a request that cannot be met as asked: exit code 2. */
export class UsageError extends Error {
  readonly exitCode = 2;
  constructor(message: string) {
    super(message);
    this.name = 'UsageError';
  }
}

/** The exit code for an error: its own, else 1. */
export function exitCodeOf(err: unknown): number {
  const code = (err as { exitCode?: unknown } | null)?.exitCode;
  return typeof code === 'number' ? code : 1;
}
