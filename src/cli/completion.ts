/**
 * `sbctl completion bash|zsh` (issues 13, 14): a completion script for the shell, made from sbctl's
 * own commands and options (so it never goes stale), that completes session names (`--session`,
 * `status`) and the monitor handles of `monitor stop|inspect|recover` by asking sbd at completion
 * time (ListSessions and ListMonitors, through the hidden `sbctl complete-sessions` and
 * `complete-handles`): quietly nothing when sbd is not running or no session is known.
 */
import type { Command } from 'commander';
import type * as dbus from 'dbus-next';
import { sessionFromBus, type SessionTuple } from '../daemon/bus-types';
import { callService } from './status';
import { SERVICE_INTERFACE } from '../daemon/bus-name';
import { listMonitors } from './monitor';

const longOptions = (c: Command): string[] => c.options.map((o) => o.long).filter((l): l is string => l !== undefined);
const visible = (c: Command): Command[] => c.commands.filter((x) => !(x as unknown as { _hidden?: boolean })._hidden);

/** Which handles a command line completes: the waiting ones for recover, the running or waiting ones for stop, all for inspect. */
export type HandleSet = 'waiting' | 'live' | 'all';

/** The bash script (zsh runs it through bashcompinit). */
export function bashCompletion(program: Command): string {
  const top = visible(program);
  const monitor = top.find((c) => c.name() === 'monitor');
  const mons = monitor ? visible(monitor) : [];
  const topCases = top.filter((c) => c.name() !== 'monitor').map((c) => `    ${c.name()}) opts="${longOptions(c).join(' ')}" ;;`).join('\n');
  const monCases = mons.map((c) => `        ${c.name()}) opts="${longOptions(c).join(' ')}" ;;`).join('\n');
  return `# sbctl completion for bash. Load it with:  eval "$(sbctl completion bash)"
# or keep it:  sbctl completion bash > ~/.local/share/bash-completion/completions/sbctl
# Monitor handles are asked of sbd when completing (nothing when sbd is not running).
__sbctl_handles() {
  local s="" i
  for ((i = 1; i < COMP_CWORD; i++)); do
    [[ "\${COMP_WORDS[i]}" == --session ]] && s="\${COMP_WORDS[i+1]}"
  done
  "\${COMP_WORDS[0]}" complete-handles --set "$1" \${s:+--session "$s"} 2>/dev/null
}
__sbctl_sessions() {
  "\${COMP_WORDS[0]}" complete-sessions 2>/dev/null
}
_sbctl() {
  local cur="\${COMP_WORDS[COMP_CWORD]}" prev="\${COMP_WORDS[COMP_CWORD-1]}" opts="" words="" i
  local -a args=()
  for ((i = 1; i < COMP_CWORD; i++)); do
    [[ "\${COMP_WORDS[i]}" == -* ]] && continue
    [[ "\${COMP_WORDS[i-1]}" == --session || "\${COMP_WORDS[i-1]}" == -c || "\${COMP_WORDS[i-1]}" == --config ]] && continue
    args+=("\${COMP_WORDS[i]}")
  done
  if [[ "$prev" == --session ]]; then COMPREPLY=($(compgen -W "$(__sbctl_sessions)" -- "$cur")); return; fi
  if ((\${#args[@]} == 0)); then
    words="${top.map((c) => c.name()).join(' ')} help"
    opts="${[...new Set([...longOptions(program), '--help', '--version'])].join(' ')}"
  else
    case "\${args[0]}" in
${topCases}
    monitor)
      if ((\${#args[@]} == 1)); then
        words="${mons.map((c) => c.name()).join(' ')}"
      else
        case "\${args[1]}" in
${monCases}
        esac
        case "\${args[1]}" in
          stop) ((\${#args[@]} == 2)) && words="$(__sbctl_handles live)" ;;
          inspect) ((\${#args[@]} == 2)) && words="$(__sbctl_handles all)" ;;
          recover)
            if ((\${#args[@]} == 2)); then words="approve reject"
            elif ((\${#args[@]} == 3)); then words="$(__sbctl_handles waiting)"; fi ;;
        esac
      fi ;;
    esac
    case "\${args[0]}" in
      completion) ((\${#args[@]} == 1)) && words="bash zsh" ;;
      status) ((\${#args[@]} == 1)) && words="$(__sbctl_sessions)" ;;
    esac
  fi
  if [[ "$cur" == -* ]]; then
    COMPREPLY=($(compgen -W "$opts --help" -- "$cur"))
  else
    COMPREPLY=($(compgen -W "$words" -- "$cur"))
    [[ \${#COMPREPLY[@]} -eq 0 && "\${args[0]}" =~ ^(holders|reap|monitor)$ ]] && COMPREPLY=($(compgen -f -- "$cur"))
  fi
}
complete -F _sbctl sbctl
`;
}

/** zsh: the same script through zsh's bash-completion layer. */
export function zshCompletion(program: Command): string {
  return `# sbctl completion for zsh. Load it with:  eval "$(sbctl completion zsh)"
autoload -U +X compinit && compinit
autoload -U +X bashcompinit && bashcompinit
${bashCompletion(program)}`;
}

const WAITING = new Set(['quarantined', 'awaiting-confirmation', 'suspended']);
const ENDED = new Set(['stopped', 'expired', 'gone']);

/** The session's handles for a completion (one per line); any failure is quietly none. */
export async function completeHandles(connect: () => Promise<dbus.MessageBus>, session: string | undefined, set: HandleSet, say: (l: string) => void): Promise<number> {
  if (session === undefined || session === '') return 0;
  let bus: dbus.MessageBus | undefined;
  try {
    bus = await connect();
    const rows = await listMonitors(bus, session);
    for (const m of rows) {
      if (set === 'waiting' && !WAITING.has(m.lifecycle)) continue;
      if (set === 'live' && ENDED.has(m.lifecycle)) continue;
      say(m.handle);
    }
  } catch {
    /* sbd not running, no bus: nothing to complete */
  } finally {
    bus?.disconnect();
  }
  return 0;
}

/** The names of the sessions sbd watches, one per line (one D-Bus call); any failure is quietly none. */
export async function completeSessions(connect: () => Promise<dbus.MessageBus>, say: (l: string) => void): Promise<number> {
  let bus: dbus.MessageBus | undefined;
  try {
    bus = await connect();
    const [rows] = (await callService(bus, SERVICE_INTERFACE, 'ListSessions', '', [])) as [SessionTuple[]];
    for (const r of rows) say(sessionFromBus(r).name);
  } catch {
    /* sbd not running, no bus: nothing to complete */
  } finally {
    bus?.disconnect();
  }
  return 0;
}
