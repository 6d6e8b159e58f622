/**
 * `sbctl status` in one D-Bus call (sbd's GetStatus) through the small wire client of
 * src/bus-lite/, without dbus-next or commander. Whatever goes wrong (no bus, sbd not running,
 * still starting, an older sbd without GetStatus, an answer of another shape) is not said here:
 * the full program then runs and says it as it always has.
 */
import { callOnce } from '../bus-lite/call';
import { SERVICE_INTERFACE, SERVICE_NAME, SERVICE_PATH } from '../daemon/bus-name';
import { encodedStatusFromJson, statusFromJson } from '../daemon/status-json';
import { userBusAddress } from '../systemd/address';
import { printEncodedJson, printReport } from './status-render';

/** How long sbd may take to answer: D-Bus's own default method-call time-out (25 s), as the full path has. */
const ANSWER_TIMEOUT_MS = 25_000;

/** The exit code, or undefined when sbd did not answer GetStatus (the full path then runs). */
export async function statusFast(env: NodeJS.ProcessEnv, session: string | undefined, json: boolean): Promise<number | undefined> {
  let print: () => number;
  try {
    const body = await callOnce(userBusAddress(env), { destination: SERVICE_NAME, path: SERVICE_PATH, interface: SERVICE_INTERFACE, member: 'GetStatus' }, ANSWER_TIMEOUT_MS);
    const text = String(body[0]);
    if (json) {
      // --json prints sbd's text again: parsed as written, "infinity" left a string (no reviver, no replacer)
      const report = encodedStatusFromJson(text);
      print = () => printEncodedJson(report, session);
    } else {
      const report = statusFromJson(text);
      print = () => printReport(report, session, false);
    }
  } catch {
    return undefined;
  }
  return print();
}
