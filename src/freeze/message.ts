/**
 * The freeze watch's words for a person woken at 3 a.m. (pure): which session, which agent and
 * what it is doing (CPU, heartbeat age, what is open: program names only, never arguments, they
 * carry tokens), and what to do about it: read its terminal or log, interrupt it, and stop the
 * session only with a handoff.
 */
import type { FreezeFacts, FreezeSignal } from './policy';

export interface FreezeContext {
  session: string;
  unit: string;
  /** The agent as read at the telling; undefined when it is gone. */
  agent: { pid: number; name: string; cpuMs: number } | undefined;
  /** Whether the session has a heartbeat file at all. */
  hasHeartbeat: boolean;
  /** Names (comm) of the open commands; undefined when the process table could not be read. */
  commands: string[] | undefined;
  mcpServers: number;
  languageServers: number;
  /** Where the agent's output goes: a terminal (/dev/pts/3) or a log file; undefined when a pipe or unknown. */
  output: string | undefined;
}

const minutes = (ms: number): string => (ms >= 60_000 ? `${(ms / 60_000).toFixed(ms >= 600_000 ? 0 : 1)} min` : `${Math.round(ms / 1000)} s`);
const plural = (n: number, one: string): string => `${n} ${one}${n === 1 ? '' : 's'}`;

/** "make, node (2 MCP servers and 1 language server not counted)", names only. */
export function openPhrase(c: Pick<FreezeContext, 'commands' | 'mcpServers' | 'languageServers'>): string {
  const servers = [c.mcpServers > 0 ? plural(c.mcpServers, 'MCP server') : '', c.languageServers > 0 ? plural(c.languageServers, 'language server') : ''].filter(Boolean);
  const notCounted = servers.length > 0 ? ` (${servers.join(' and ')} not counted)` : '';
  if (c.commands === undefined) return `open: unknown${notCounted}`;
  return c.commands.length === 0 ? `nothing open${notCounted}` : `open: ${c.commands.join(', ')}${notCounted}`;
}

/** What the signal means, with its figures. */
function what(signal: FreezeSignal, f: FreezeFacts, c: FreezeContext): string {
  const agent = c.agent ? `its agent (${c.agent.name}, pid ${c.agent.pid})` : 'its agent';
  const beat = f.beatAgeMs === undefined ? (c.hasHeartbeat ? 'its heartbeat file is missing' : 'it has no heartbeat file') : `heartbeat last written ${minutes(f.beatAgeMs)} ago`;
  switch (signal) {
    case 'pegged':
      return `${agent} has spun at ${Math.round((f.share ?? 0) * 100)} % of a core for ${minutes(f.busyForMs ?? 0)} without writing its heartbeat (${beat})`;
    case 'missing':
      return `${agent} is alive but has not renewed its heartbeat for ${minutes(f.beatAgeMs ?? 0)}`;
    case 'silent':
      return `${agent} claims to be working but has not written its heartbeat for ${minutes(f.beatAgeMs ?? 0)}`;
  }
}

/** The steps, in order. */
export function steps(c: FreezeContext): string[] {
  const where = c.output === undefined ? 'read the terminal or log of whoever started the agent' : c.output.startsWith('/dev/') ? `read its terminal ${c.output}` : `read its log ${c.output}`;
  const interrupt = c.agent ? `interrupt it (Esc or Ctrl-C in that terminal, or kill -INT ${c.agent.pid})` : 'interrupt it';
  return [where, interrupt, `stop the session only with a handoff (note what it was doing and what is open, then systemctl --user stop ${c.unit})`];
}

/** The message of a signal ("session S is pegged: ..."), or of a reminder when `still`. */
export function freezeMessage(signals: FreezeSignal[], f: FreezeFacts, c: FreezeContext, still = false): string {
  const head = `session ${c.session} is ${still ? 'still ' : ''}${signals.join(' and ')}`;
  const cpu = c.agent ? [`agent CPU ${(c.agent.cpuMs / 60_000).toFixed(1)} min in all`] : [];
  return `${head}: ${[...signals.map((s) => what(s, f, c)), ...cpu, openPhrase(c)].join('; ')}. What to do: ${steps(c).join('; ')}.`;
}
