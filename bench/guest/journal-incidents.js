// @ts-check
'use strict';
// sbd's incidents read back from its journal, one JSON object a line in the shape the benches
// read ({event, unit, session, atMs, culprit, rule}): the native entries (issue 14: INCIDENT=,
// UNIT=, SESSION=, ...; atMs is when the journal received the entry, µs after sbd sent it) and,
// for an sbd before issue 14 or an incident the journal's socket did not take, its stdout JSON lines.
//   node bench/guest/journal-incidents.js [more journalctl arguments, e.g. --since -5min]
const { spawnSync } = require('node:child_process');

/** One entry of `journalctl -o json` as an incident, or undefined when it is none. */
function incidentOf(entry) {
  if (typeof entry.INCIDENT === 'string') {
    const us = Number(entry._SOURCE_REALTIME_TIMESTAMP ?? entry.__REALTIME_TIMESTAMP);
    return { event: entry.INCIDENT, unit: entry.UNIT, session: entry.SESSION, atMs: Math.round(us / 1000), culprit: entry.CULPRIT, rule: entry.RULE };
  }
  if (typeof entry.MESSAGE !== 'string') return undefined;
  try {
    const line = JSON.parse(entry.MESSAGE.replace(/^<\d>/, ''));
    return line && typeof line.event === 'string' && typeof line.atMs === 'number' ? line : undefined;
  } catch {
    return undefined;
  }
}

/** sbd's incidents, oldest first (`--all`: a long stdout line is not shown as null). */
function sbdIncidents(args = []) {
  const r = spawnSync('journalctl', ['--user', '-u', 'sbd.service', '--no-pager', '-o', 'json', '--all', ...args], { encoding: 'utf8', maxBuffer: 256 * 2 ** 20 });
  return r.stdout.split('\n').filter(Boolean).map((l) => incidentOf(JSON.parse(l))).filter((i) => i !== undefined);
}

if (require.main === module) for (const i of sbdIncidents(process.argv.slice(2))) console.log(JSON.stringify(i));

module.exports = { incidentOf, sbdIncidents };
