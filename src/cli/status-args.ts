/**
 * Is this command line a plain `status [SESSION] [--json]` (pure)? Only then does sbctl take its
 * fast path; any other option (--help, -c, a second session, a typo) goes to commander, which
 * parses and explains it.
 */
export function plainStatusArgs(args: readonly string[]): { session: string | undefined; json: boolean } | undefined {
  if (args[0] !== 'status') return undefined;
  let json = false;
  let session: string | undefined;
  for (const a of args.slice(1)) {
    if (a === '--json' && !json) json = true;
    else if (!a.startsWith('-') && a !== '' && session === undefined) session = a;
    else return undefined;
  }
  return { session, json };
}
