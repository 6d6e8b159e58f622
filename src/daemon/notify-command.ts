/**
 * The optional notify command of the config: an argv (never a shell string), run once per
 * incident with the incident as JSON on its stdin, killed after notifyTimeoutS.
 */
import { spawn } from 'node:child_process';
import type { Incident } from './incidents';
import type { Logger } from './log';

export function runNotifyCommand(argv: readonly string[], incident: Incident, timeoutS: number, log: Logger): void {
  const [cmd, ...args] = argv;
  if (cmd === undefined) return;
  const child = spawn(cmd, args, { stdio: ['pipe', 'ignore', 'ignore'], timeout: timeoutS * 1000, killSignal: 'SIGKILL' });
  child.on('error', (err) => log.warn({ event: 'notify-failed', command: cmd, err: err.message }, 'the notify command could not run'));
  child.on('exit', (code, signal) => {
    if (code !== 0) log.warn({ event: 'notify-failed', command: cmd, code, signal }, 'the notify command failed');
  });
  child.stdin.on('error', () => {}); // it may exit without reading
  child.stdin.end(`${JSON.stringify(incident)}\n`);
}
