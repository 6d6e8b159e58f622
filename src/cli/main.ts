#!/usr/bin/env node
/**
 * sbctl's entry point. `sbctl status [SESSION] [--json]`, the command run most (by people, by
 * scripts, in loops), is answered here in one D-Bus call without loading commander or dbus-next
 * (issue 15: under the lab's CPU emulation compiling those was most of its time); anything else,
 * and a status sbd does not answer, goes to the full program (program.ts).
 */
import { plainStatusArgs } from './status-args';

async function run(): Promise<number> {
  const plain = plainStatusArgs(process.argv.slice(2));
  if (plain) {
    const code = await (require('./status-fast') as typeof import('./status-fast')).statusFast(process.env, plain.session, plain.json);
    if (code !== undefined) return code;
  }
  return (require('./program') as typeof import('./program')).main(process.argv);
}

if (require.main === module) {
  // Exit once stdout is flushed: nothing sbctl opened may keep it alive after the answer.
  void run().then((code) => process.stdout.write('', () => process.exit(code)));
}
