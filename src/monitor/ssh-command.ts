/**
 * An ssh monitor is a poll whose program is `ssh` (issue 13: a spawn of ssh is enough, no ssh
 * library). The argv built here (pure) is ssh's own options, the host, `--`, then the remote
 * probe's words, each a separate argument: never one command string built by sbd.
 *
 * Why separate words are the least bad: ssh itself joins its command words with spaces and the
 * remote user's shell parses the line, so a remote shell is unavoidable. Quoting the words for
 * that shell would guess which shell it is; instead words that shell would read differently are
 * refused before anything runs (safety.ts judgeRemoteProbe), so what arrives is the argv given.
 *  - BatchMode=yes: never a prompt (password, passphrase, unknown host key): ssh fails instead,
 *    with its own exit status 255, counted as a failed tick;
 *  - ConnectTimeout: an unreachable host is ssh's own failure within part of the tick's timeout,
 *    not a kill at the timeout, and the remote probe keeps the rest;
 *  - `--` after the host: the remote words are never read as ssh's options.
 */

/** The share of a tick's timeout ssh may spend connecting: half, so the remote probe has the other half. */
export const SSH_CONNECT_SHARE = 0.5;

/** ssh's argv for a probe of `host` (argv[0] is "ssh": ExecStart gets the program's path apart). */
export function sshProbeArgv(host: string, timeoutS: number, remote: readonly string[]): string[] {
  const connectS = Math.max(1, Math.floor(timeoutS * SSH_CONNECT_SHARE));
  return ['ssh', '-o', 'BatchMode=yes', '-o', `ConnectTimeout=${connectS}`, host, '--', ...remote];
}
