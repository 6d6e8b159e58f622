/**
 * pino JSON lines on stdout, which journald takes. Under journald (JOURNAL_STREAM set) each line
 * starts with a `<N>` syslog priority, which journald turns into the entry's priority
 * (SyslogLevelPrefix=, on by default).
 */
import pino from 'pino';

/** pino level -> syslog priority. */
const PRIORITIES: Array<[pino.Level, number]> = [
  ['trace', 7], ['debug', 7], ['info', 6], ['warn', 4], ['error', 3], ['fatal', 2],
];

export type Logger = pino.Logger;

/** The syslog priority of a pino level (the journal's PRIORITY=). */
export function syslogPriority(level: pino.Level): number {
  return PRIORITIES.find(([l]) => l === level)?.[1] ?? 6;
}

export function createLogger(env: NodeJS.ProcessEnv = process.env, level: pino.Level = 'info'): Logger {
  const base = { base: { service: 'sbd' }, level, timestamp: pino.stdTimeFunctions.isoTime };
  if (!env.JOURNAL_STREAM) return pino(base, pino.destination({ dest: 1, sync: true }));
  const out = pino.destination({ dest: 1, sync: true });
  const streams = PRIORITIES.map(([lvl, prio]) => ({
    level: lvl,
    stream: { write: (line: string) => out.write(`<${prio}>${line}`) },
  }));
  return pino(base, pino.multistream(streams, { dedupe: true }));
}
