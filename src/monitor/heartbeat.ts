/**
 * heartbeatMinutes (issue 13): every N minutes a notice that the monitor is alive and what it last
 * saw, unless another notice of that monitor went out within the period (the agent heard from it
 * already). Pure: times in, a decision and a text out; monitor/timers.ts runs it.
 */
import { MAX_LINE_CHARS } from './notices';

export interface HeartbeatState {
  /** When the period began: the monitor's start or resume, or its last notice (monotonic ms). */
  lastToldMonoMs: number;
}

/** When the next heartbeat is due (monotonic ms). */
export const heartbeatDueMs = (s: HeartbeatState, periodMs: number): number => s.lastToldMonoMs + periodMs;

/** Due now? False when a notice went out within the period (the timer is then re-armed for later). */
export const heartbeatDue = (s: HeartbeatState, periodMs: number, nowMonoMs: number): boolean => nowMonoMs >= heartbeatDueMs(s, periodMs);

export interface SeenSoFar {
  ticks: number;
  consecutiveFailures: number;
  /** The last output line read (undefined when none since this sbd began). */
  lastLine?: string | undefined;
}

/** The heartbeat's text: alive, how many ticks, failures if any, the last line (cut). */
export function heartbeatText(s: SeenSoFar): string {
  const line = s.lastLine === undefined ? 'no output line seen yet' : `last line: ${JSON.stringify(s.lastLine.length > MAX_LINE_CHARS ? `${s.lastLine.slice(0, MAX_LINE_CHARS)}…` : s.lastLine)}`;
  const failures = s.consecutiveFailures > 0 ? `, ${s.consecutiveFailures} failure${s.consecutiveFailures === 1 ? '' : 's'} in a row` : '';
  return `alive: ${s.ticks} tick${s.ticks === 1 ? '' : 's'}${failures}; ${line}`;
}
