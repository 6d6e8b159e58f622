/**
 * What this systemd can do with a session's scope after a kernel OOM kill (OOMPolicy=), judged
 * by what the manager accepts, not by its version: upstream added OOMPolicy= for scopes in 253,
 * yet Debian 12's 252.39 accepts and honours it on a transient scope (measured in the lab guest:
 * with `continue` the kill takes one process and the scope stays active).
 */

/** The major version, or undefined when the string does not start with one ("252.39-1~deb12u2"). */
export function systemdMajor(version: string): number | undefined {
  const m = /^v?(\d+)/.exec(version.trim());
  return m ? Number(m[1]) : undefined;
}

/** A refusal of StartTransientUnit that is about the OOMPolicy property (an older systemd). */
export function refusedOomPolicy(err: unknown): boolean {
  const text = `${(err as { type?: string } | undefined)?.type ?? ''} ${(err as Error | undefined)?.message ?? String(err)}`;
  return /OOMPolicy/.test(text);
}

/** What `sbctl doctor` says: `policy` is a scope's OOMPolicy as the manager reports it, or undefined when scopes have none. */
export function describeOomPolicy(version: string, policy: string | undefined): string {
  if (policy !== undefined) {
    return `systemd ${version}: scopes take OOMPolicy= (the default here: ${policy || 'stop'}); sbctl run sets continue, so a kernel OOM kill takes one process, not the session`;
  }
  return `systemd ${version}: scopes have no OOMPolicy=, so a kernel OOM kill in a session makes systemd stop the whole scope (agent and MCP servers too); ` +
    'sbd keeps raised brakes raise.maxMargin below MemoryMax so that it stops the biggest command first, and tells any OOM kill';
}
