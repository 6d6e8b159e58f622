/**
 * Choosing what to stop in a session standing still (design.md §5), a pure function of the
 * session's process table. Never the agent, never an MCP server or what runs under one; git is
 * spared (a killed git leaves .git/index.lock behind); the rest is ranked by whole subtrees.
 */

/** What the choice needs of a process: no file is read here. */
export interface Proc {
  pid: number;
  ppid: number;
  comm: string;
  rssBytes: number;
  /** For matching MCP servers only; never copied into the result. */
  argv: readonly string[];
}

export interface Candidate {
  /** The root-most process of the subtree. */
  rootPid: number;
  /** The heaviest process's comm: never its arguments (they carry tokens). */
  name: string;
  /** What would be signalled, deepest first. */
  pids: number[];
  /** Summed RSS of `pids`. */
  rssBytes: number;
  /** Processes of the subtree left alone because they are git or run under git. */
  sparedGit: number[];
}

export interface Choice {
  /** The heaviest candidate, or undefined when there is nothing that may be stopped. */
  victim: Candidate | undefined;
  /** Every candidate, heaviest first. */
  candidates: Candidate[];
  agentPid: number | undefined;
  /** True when the agent is the known `agentPid`; false when it was inferred (the root taken). */
  agentKnown: boolean;
  /**
   * Processes never considered: the agent, MCP servers and their trees, and, only when the agent
   * was inferred, processes with its program name.
   */
  protectedPids: number[];
}

/** An MCP server: `mcp` as a word, or `modelcontextprotocol`, anywhere in its command line. */
const MCP = /(^|[^A-Za-z0-9])mcp([^A-Za-z0-9]|$)|modelcontextprotocol/i;
export const isMcp = (p: Proc): boolean => p.argv.some((a) => MCP.test(a));
/** git and its helpers (git-remote-https, git-lfs, ...). */
export const isGit = (p: Proc): boolean => p.comm.startsWith('git');

/**
 * Choose within the processes of one cgroup. `agentPid` is the agent (from sbctl run's record);
 * when absent or not in the cgroup, the oldest root of the tree is taken (`rootPid`).
 *
 * Namesakes: only an inferred agent protects processes with its program name (a root `claude`
 * whose child is another `claude` is most likely the agent re-executing itself). A known agent
 * protects only itself: a `node` agent's `node` build (webpack, tsc, jest) is a command.
 */
export function chooseVictim(procs: readonly Proc[], agentPid: number | undefined, rootPid: number | undefined): Choice {
  const byPid = new Map(procs.map((p) => [p.pid, p]));
  const children = new Map<number, Proc[]>();
  for (const p of procs) {
    if (p.pid === p.ppid || !byPid.has(p.ppid)) continue;
    const list = children.get(p.ppid) ?? [];
    list.push(p);
    children.set(p.ppid, list);
  }
  const known = byPid.get(agentPid ?? -1);
  const agent = known ?? byPid.get(rootPid ?? -1);
  // The agent and, when something in the cgroup started it (a wrapper), the line of its
  // ancestors: stopping a wrapper may end the agent with it.
  const agentLine = new Set<Proc>();
  for (let q = agent; q !== undefined && !agentLine.has(q); q = byPid.get(q.ppid)) agentLine.add(q);
  const isAgent = (p: Proc): boolean => agentLine.has(p) || (known === undefined && agent !== undefined && p.comm === agent.comm);
  const protectedPids: number[] = [];
  const protectTree = (p: Proc): void => {
    protectedPids.push(p.pid);
    for (const c of children.get(p.pid) ?? []) protectTree(c);
  };

  // Walk down from the agent (and any other root of the cgroup): the agent, its ancestors and an
  // inferred agent's namesakes are not commands; the first process below that is neither is a
  // candidate root.
  const roots: Proc[] = [];
  const visit = (p: Proc): void => {
    if (!agentLine.has(p) && isMcp(p)) return protectTree(p); // the agent's own argv may name an MCP config: not checked
    if (isAgent(p)) {
      protectedPids.push(p.pid);
      for (const c of children.get(p.pid) ?? []) visit(c);
      return;
    }
    roots.push(p);
  };
  for (const p of procs) if (!byPid.has(p.ppid) || p.pid === p.ppid) visit(p);

  const candidates = roots.map((root) => subtree(root, children)).filter((c): c is Candidate => c !== undefined);
  candidates.sort((a, b) => b.rssBytes - a.rssBytes || a.rootPid - b.rootPid);
  return { victim: candidates[0], candidates, agentPid: agent?.pid, agentKnown: known !== undefined, protectedPids: protectedPids.sort((a, b) => a - b) };
}

/** The candidate rooted at `root`: its tree minus MCP subtrees and minus git and what runs under git. */
function subtree(root: Proc, children: ReadonlyMap<number, Proc[]>): Candidate | undefined {
  const signalled: Array<{ p: Proc; depth: number }> = [];
  const sparedGit: number[] = [];
  const walk = (p: Proc, depth: number, underGit: boolean): void => {
    if (isMcp(p)) return; // never an MCP server, nor anything under one
    const git = underGit || isGit(p);
    if (git) sparedGit.push(p.pid);
    else signalled.push({ p, depth });
    for (const c of children.get(p.pid) ?? []) walk(c, depth + 1, git);
  };
  walk(root, 0, false);
  if (signalled.length === 0) return undefined; // a tree that is only git is spared whole
  signalled.sort((a, b) => b.depth - a.depth || b.p.pid - a.p.pid); // deepest first
  let heaviest = signalled[0]?.p as Proc;
  for (const { p } of signalled) if (p.rssBytes > heaviest.rssBytes) heaviest = p;
  return {
    rootPid: root.pid,
    name: heaviest.comm,
    pids: signalled.map(({ p }) => p.pid),
    rssBytes: signalled.reduce((sum, { p }) => sum + p.rssBytes, 0),
    sparedGit: sparedGit.sort((a, b) => a - b),
  };
}
