/**
 * A tail monitor (issue 13): lines appended to a file, followed by the addon's inotify watch (no
 * polling). It begins at the file's end (or its start with fromStart) and, after a restart,
 * resumes at the saved offset, so nothing is told twice and nothing written meanwhile is lost.
 */
import * as fs from 'node:fs';
import type { Runner } from '../runner';

export const tailRunner: Runner = {
  async begin(kit, record) {
    if (record.spec.type !== 'tail') return;
    let offset = 0;
    try {
      offset = record.spec.fromStart ? 0 : fs.statSync(record.spec.path).size;
    } catch {
      offset = 0; // not there yet: read from its start when it comes
    }
    kit.save({ ...record, offset });
    kit.follow(record.id, record.spec.path);
  },
  resume(kit, record) {
    if (record.spec.type !== 'tail') return;
    kit.follow(record.id, record.spec.path);
    kit.catchUp(record.spec.path); // what came while sbd was away, from the saved offset
  },
  async stop(kit, record) {
    if (record.spec.type === 'tail') kit.unfollow(record.spec.path);
  },
};
