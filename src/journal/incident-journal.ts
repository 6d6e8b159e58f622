/**
 * Incidents to the journal natively (the thin shell around ./incident-entry.ts and ./encode.ts).
 * Under journald, an incident the journal's socket takes is not also written as a log line on
 * stdout (no duplicates). A send that fails (no socket, a journal that does not keep up) is
 * warned of once, naming the socket and the errno, and that incident, like every later one the
 * socket does not take, goes to stdout as before: nothing is lost.
 */
import type { IncidentWriter } from '../daemon/incidents';
import { type Logger, syslogPriority } from '../daemon/log';
import { JOURNAL_SOCKET, type JournalRoute, type NativeError, journalSend } from '../native';
import { encodeEntry } from './encode';
import { incidentEntry } from './incident-entry';

export interface JournalWriterDeps {
  socket: string;
  /** Sends one encoded entry to `socket`; throws when it cannot. */
  send(entry: Buffer, socket: string): JournalRoute;
  warn(fields: Record<string, unknown>, msg: string): void;
}

export function journalWriter(deps: JournalWriterDeps): IncidentWriter {
  let warned = false;
  return (i, level) => {
    try {
      deps.send(encodeEntry(incidentEntry(i, syslogPriority(level))), deps.socket);
      return true;
    } catch (err) {
      if (!warned) {
        warned = true;
        const e = err as Partial<NativeError>;
        const why = e.syscall ? `${e.syscall}: ${e.code ?? '?'}` : String(e.message ?? err);
        deps.warn(
          { event: 'journal-send-failed', socket: deps.socket, syscall: e.syscall, code: e.code },
          `cannot send incidents natively to the journal's socket ${deps.socket} (${why}): each one the socket does not take is written to stdout instead (told once)`,
        );
      }
      return false;
    }
  };
}

/** Under journald (JOURNAL_STREAM set, as systemd sets it for a unit's output) the native writer; otherwise none. */
export function incidentJournal(env: NodeJS.ProcessEnv, log: Logger, socket = JOURNAL_SOCKET): IncidentWriter | undefined {
  if (!env.JOURNAL_STREAM) return undefined;
  return journalWriter({ socket, send: journalSend, warn: (fields, msg) => log.warn(fields, msg) });
}
