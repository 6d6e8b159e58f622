/**
 * `sbctl status`'s output, whichever way the report came (sbd's one call, its properties and
 * lists, or systemd read directly): the text or JSON, the session picked, the exit code as
 * `systemctl status` has them: 0 sbd running, 3 not running, 4 no such session.
 */
import type { StatusReport } from '../sessions/status';
import { jsonValue } from '../daemon/status-json';
import { formatStatus } from './status-format';

export { jsonValue };

export const EXIT_NOT_RUNNING = 3;
export const EXIT_NO_SUCH_SESSION = 4;

/** The report as sbctl prints it: text for people, or JSON with an unlimited size as "infinity"
 * (as systemd and sbd's config write it), whether sbd answered or sbctl read systemd itself. */
export function renderStatus(report: StatusReport, json: boolean): string {
  return json ? JSON.stringify(report, jsonValue, 2) : formatStatus(report);
}


/** Prints the report (or the one session asked for) and returns the exit code. */
export function printReport(report: StatusReport, session: string | undefined, json: boolean): number {
  if (session !== undefined) {
    const match = report.sessions.filter((s) => s.name === session || s.unit === session);
    if (match.length === 0) {
      process.stderr.write(`sbctl status: no session "${session}" in ${report.service.slices.join(', ')} (sbctl status lists them)\n`);
      return EXIT_NO_SUCH_SESSION;
    }
    report = { ...report, sessions: match };
  }
  process.stdout.write(`${renderStatus(report, json)}\n`);
  return report.service.running ? 0 : EXIT_NOT_RUNNING;
}
