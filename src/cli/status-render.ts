/**
 * `sbctl status`'s output, whichever way the report came (sbd's one call, its properties and
 * lists, or systemd read directly): the text or JSON, the session picked, the exit code as
 * `systemctl status` has them: 0 sbd running, 3 not running, 4 no such session.
 */
import type { StatusReport } from '../sessions/status';
import { type EncodedStatusReport, jsonValue } from '../daemon/status-json';
import { formatStatus } from './status-format';

export { jsonValue };

export const EXIT_NOT_RUNNING = 3;
export const EXIT_NO_SUCH_SESSION = 4;

/** The report as sbctl prints it: text for people, or JSON with an unlimited size as "infinity"
 * (as systemd and sbd's config write it), whether sbd answered or sbctl read systemd itself. */
export function renderStatus(report: StatusReport, json: boolean): string {
  return json ? JSON.stringify(report, jsonValue, 2) : formatStatus(report);
}


/** The one session asked for (by name or unit), or the exit code when there is none. */
function pick<R extends { service: { slices: string[] }; sessions: Array<{ name: string; unit: string }> }>(report: R, session: string | undefined): R | number {
  if (session === undefined) return report;
  const match = report.sessions.filter((s) => s.name === session || s.unit === session);
  if (match.length === 0) {
    process.stderr.write(`sbctl status: no session "${session}" in ${report.service.slices.join(', ')} (sbctl status lists them)\n`);
    return EXIT_NO_SUCH_SESSION;
  }
  return { ...report, sessions: match };
}

/** Prints the report (or the one session asked for) and returns the exit code. */
export function printReport(report: StatusReport, session: string | undefined, json: boolean): number {
  const r = pick(report, session);
  if (typeof r === 'number') return r;
  process.stdout.write(`${renderStatus(r, json)}\n`);
  return r.service.running ? 0 : EXIT_NOT_RUNNING;
}

/** `--json` of a report as sbd wrote it (sizes already "infinity"): the same text as printReport's, without a replacer. */
export function printEncodedJson(report: EncodedStatusReport, session: string | undefined): number {
  const r = pick(report, session);
  if (typeof r === 'number') return r;
  process.stdout.write(`${JSON.stringify(r, null, 2)}\n`);
  return r.service.running ? 0 : EXIT_NOT_RUNNING;
}
