/**
 * An ssh monitor (issue 13): a remote read-only probe, run as a poll of `ssh` (runners/poll.ts:
 * a transient timer plus service; no ssh library). ssh is found on sbd's PATH; its argv is
 * built by monitor/ssh-command.ts (options, the host, `--`, the probe's words, never one command
 * string), and the probe's words were judged before (safety.ts judgeRemoteProbe). After sbd
 * restarts it resumes (a remote look starts no local work): monitor/recovery.ts.
 */
import { type MonitorHost, MonitorRequestError, type RunnerKit } from '../runner';
import { sshProbeArgv } from '../ssh-command';
import type { MonitorRecord } from '../store';
import { type ProbeCommand, type ProbeSpec, probeRunner } from './poll';

export function sshCommand(host: MonitorHost, spec: ProbeSpec): ProbeCommand {
  if (spec.type !== 'ssh') throw new Error(`not an ssh monitor: ${spec.type}`);
  const ssh = host.resolveProgram('ssh');
  if (ssh === undefined) throw new MonitorRequestError('an ssh monitor runs "ssh", which is not on sbd\'s PATH: install the OpenSSH client (Debian: openssh-client)');
  return { programPath: ssh, argv: sshProbeArgv(spec.host, spec.timeoutS, spec.argv) };
}

export const sshRunner = probeRunner(sshCommand);

/** Start an ssh monitor again (recover approve, after a suspension). */
export const restartSsh = (kit: RunnerKit, record: MonitorRecord): Promise<void> => sshRunner.restart(kit, record);
