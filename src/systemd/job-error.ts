/**
 * A systemd job that did not end in "done" (its result: failed, timeout, canceled, dependency…).
 * Its own module so that the policy layers (monitor runners) can tell a job's failure from a
 * refused D-Bus call without depending on the bus client.
 */
export class JobFailedError extends Error {
  readonly unit: string;
  readonly result: string;
  constructor(what: string, unit: string, result: string) {
    super(`${what} ${unit}: the job ended "${result}" (see journalctl --user -u ${unit})`);
    this.name = 'JobFailedError';
    this.unit = unit;
    this.result = result;
  }
}
