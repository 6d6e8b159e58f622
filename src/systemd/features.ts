/**
 * What this systemd can do, from the user manager's Version property (pure). systemd's version
 * string is "252.39-1~deb12u2" (Debian 12), "257.9-1~deb13u1" (Debian 13), "255" (upstream).
 */

/** OOMPolicy= is settable on scopes from systemd 253 on (NEWS for v253); 252 applies stop. */
export const SCOPE_OOM_POLICY_SINCE = 253;

/** The major version, or undefined when the string does not start with one. */
export function systemdMajor(version: string): number | undefined {
  const m = /^v?(\d+)/.exec(version.trim());
  return m ? Number(m[1]) : undefined;
}

/** May a transient scope be given OOMPolicy=? Unknown versions: no (a refused property fails the start). */
export function scopeOomPolicySupported(version: string): boolean {
  const major = systemdMajor(version);
  return major !== undefined && major >= SCOPE_OOM_POLICY_SINCE;
}

/** What `sbctl doctor` says of this systemd and a kernel OOM kill in a session. */
export function describeOomPolicy(version: string): string {
  if (scopeOomPolicySupported(version)) {
    return `systemd ${version}: sbctl run sets OOMPolicy=continue on its scopes, so a kernel OOM kill takes one process, not the session`;
  }
  return `systemd ${version}: OOMPolicy= on scopes needs ${SCOPE_OOM_POLICY_SINCE}, so a kernel OOM kill in a session makes systemd stop the whole scope (agent and MCP servers too); ` +
    'sbd keeps raised brakes raise.maxMargin below MemoryMax so that it stops the biggest command first, and tells any OOM kill';
}
