/**
 * What sbd tells the agent itself about its session (issue 13, the inbox), from the incidents it
 * already tells operators: said to the agent, in the agent's terms, with what to do. Today an
 * agent whose build was stopped sees only exit status 143. Pure: an incident in, a notice (or
 * nothing: not every incident is the agent's business) out. Never command-line arguments.
 */
import type { Incident } from '../daemon/incidents';
import { formatSize } from '../util/size';

export interface AgentNotice {
  kind: string;
  text: string;
}

const clock = (atMs: number): string => new Date(atMs).toTimeString().slice(0, 5);
const num = (v: unknown): number | undefined => (typeof v === 'number' && Number.isFinite(v) ? v : undefined);
const str = (v: unknown): string | undefined => (typeof v === 'string' && v !== '' ? v : undefined);

/** Why the stop came, in words an agent can act on. */
function whyStopped(i: Incident): string {
  if (i.critical === true || i.cause === 'machine') return 'the machine was nearly out of memory';
  if (i.slice !== undefined) return `the session's slice ${String(i.slice)} stood still against its shared memory limit and this session grew most`;
  return 'it stood still against the session\'s memory brake and there was no room to raise it';
}

export function noticeFor(i: Incident): AgentNotice | undefined {
  if (i.observeOnly) return undefined; // nothing was done: nothing for the agent to act on
  const name = str(i.name) ?? 'a command';
  switch (i.type) {
    case 'brake-raised': {
      const to = num(i.toBytes);
      return { kind: 'brake-raised', text: `your session's memory brake was raised${to !== undefined ? ` to ${formatSize(to)}` : ''} at ${clock(i.atMs)}: it was standing still against it; nothing to do` };
    }
    case 'will-stop':
      return { kind: 'will-stop', text: `your command ${name} is being stopped (SIGTERM now) at ${clock(i.atMs)} because ${whyStopped(i)}` };
    case 'subtree-stopped':
    case 'stop-finished': {
      const rss = num(i.rssBytes);
      return {
        kind: 'stopped',
        text: `your command ${name}${rss !== undefined ? ` (${formatSize(rss)})` : ''} was stopped at ${clock(i.atMs)} because ${whyStopped(i)}: if you run it again, use less parallelism or less memory (e.g. make -j2), or split the work`,
      };
    }
    case 'oom-kill':
      return { kind: 'oom-kill', text: `the kernel's OOM killer ended ${name} in your session at ${clock(i.atMs)}: it hit the session's hard memory limit; run it with less memory` };
    case 'culprit':
      return { kind: 'culprit', text: `your session grew most while its slice stood still (${str(i.why) ?? 'shared limit'}): its biggest command will be stopped unless memory is freed` };
    case 'nothing-to-stop':
      return { kind: 'standing-still', text: `your session stands still against its memory brake and only the agent, MCP servers or git remain: free memory or ask for a higher brake` };
    default:
      return undefined;
  }
}
