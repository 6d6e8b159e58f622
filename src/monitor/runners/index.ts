/** The runner of each monitor type this sbd runs (issue 13); a type without one is refused. */
import type { Runner } from '../runner';
import type { MonitorType } from '../spec';
import { pollRunner } from './poll';
import { fileRunner } from './file';
import { httpRunner } from './http';
import { processRunner } from './process';
import { spawnRunner } from './spawn';
import { sshRunner } from './ssh';
import { tailRunner } from './tail';

export const RUNNERS: Partial<Record<MonitorType, Runner>> = {
  spawn: spawnRunner,
  tail: tailRunner,
  poll: pollRunner,
  ssh: sshRunner,
  file: fileRunner,
  process: processRunner,
  http: httpRunner,
};
