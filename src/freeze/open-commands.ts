/**
 * What an agent has open, for the freeze watch (a pure function of the session's process table):
 * the commands it started and waits on, not the servers it talks to. An MCP server (recognized as
 * the victim choice does, design.md §5) or a language server runs for the whole session and says
 * nothing about progress; counting them as open commands made "silent" unreachable.
 */
import { type Proc, isMcp } from '../victim/choose';

/**
 * A language server, by a program name on its command line: `…language-server`, `…languageserver`,
 * `…langserver`, `…-lsp…`, or a well-known one (gopls, clangd, rust-analyzer, tsserver, ...).
 * Tested on the basename of each word that is not an option (node and python run servers as
 * scripts; `sh -c "exec gopls"` holds it in one argument).
 */
const LANGUAGE_SERVER =
  /^(?:[\w.+@-]*(?:language[-_]?server|langserver|[-_]lsp)[\w.+-]*|pylsp|pyls|gopls|clangd|ccls|rust-analyzer|tsserver|vtsls|jdtls|solargraph|texlab|taplo|marksman|metals|zls|omnisharp|elixir-ls|terraform-ls)(?:\.(?:[cm]?js|py|jar|exe))?$/i;
export const isLanguageServer = (p: Proc): boolean =>
  LANGUAGE_SERVER.test(p.comm) ||
  p.argv.some((a) => a.split(/\s+/).some((w) => w !== '' && !w.startsWith('-') && LANGUAGE_SERVER.test(w.slice(w.lastIndexOf('/') + 1))));

export interface OpenView {
  /** The root of each command the agent waits on (its direct child, or a wrapper's), oldest pid first. */
  commands: Proc[];
  /** Servers below the agent, not counted as commands. */
  mcpServers: number;
  languageServers: number;
}

/**
 * Below the agent `agentPid`: each child is an MCP server, a language server, a wrapper of
 * servers only (`sh -c`, `npx`: every child a server), or an open command. Processes outside the
 * agent's tree (daemonized, left behind) are not waited on. An unknown agent has nothing open.
 */
export function openCommands(procs: readonly Proc[], agentPid: number): OpenView {
  const children = new Map<number, Proc[]>();
  for (const p of procs) {
    if (p.pid === p.ppid) continue;
    const list = children.get(p.ppid) ?? [];
    list.push(p);
    children.set(p.ppid, list);
  }
  const view: OpenView = { commands: [], mcpServers: 0, languageServers: 0 };
  type Kind = 'mcp' | 'lsp' | 'command';
  const kindOf = (p: Proc, seen: Set<number>): Kind[] => {
    if (isMcp(p)) return ['mcp'];
    if (isLanguageServer(p)) return ['lsp'];
    seen.add(p.pid);
    const below = (children.get(p.pid) ?? []).filter((c) => !seen.has(c.pid)).flatMap((c) => kindOf(c, seen));
    return below.length > 0 && below.every((k) => k !== 'command') ? below : ['command'];
  };
  for (const child of children.get(agentPid) ?? []) {
    if (child.pid === agentPid) continue;
    const kinds = kindOf(child, new Set([agentPid]));
    if (kinds.includes('command')) view.commands.push(child);
    view.mcpServers += kinds.filter((k) => k === 'mcp').length;
    view.languageServers += kinds.filter((k) => k === 'lsp').length;
  }
  view.commands.sort((a, b) => a.pid - b.pid);
  return view;
}
