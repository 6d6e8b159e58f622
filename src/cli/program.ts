/**
 * sbctl: the command line of sessionbrake. Talks to systemd's user manager over D-Bus (never
 * by running systemctl) and to sbd over its D-Bus interface.
 */
import { Argument, Command, CommanderError, InvalidArgumentError, Option } from 'commander';
import * as path from 'node:path';
import type * as dbus from 'dbus-next';
import { defaultConfigPath } from '../config/path';
import type { Config } from '../config/schema';
import type { DbusUserManager } from '../systemd/user-manager';
import { userBusAddress } from '../systemd/address';
import { parseDurationS, parseSize } from '../util/size';
import { FINISHED_RETENTION_MS } from '../monitor/gc';
import { VERSION } from '../version';
import { UsageError, exitCodeOf } from './errors';
import type { HandleSet } from './completion';

// Each command loads its own modules when it runs, not all of them at every start: compiling
// modules was most of sbctl's start, and under the lab's CPU emulation it cost seconds (`sbctl
// --help` 10-14 s in the guest against 1.5 s for `node -e 0`, 2026-11-30). The config (zod)
// and D-Bus (dbus-next) are loaded only by the commands that use them.
const lazy = {
  config: () => require('../config/load') as typeof import('../config/load'),
  systemd: () => require('../systemd/user-manager') as typeof import('../systemd/user-manager'),
  doctor: () => require('./doctor') as typeof import('./doctor'),
  install: () => require('./install') as typeof import('./install'),
  inbox: () => require('./inbox') as typeof import('./inbox'),
  monitor: () => require('./monitor') as typeof import('./monitor'),
  completion: () => require('./completion') as typeof import('./completion'),
  reap: () => require('./reap') as typeof import('./reap'),
  run: () => require('./run') as typeof import('./run'),
  status: () => require('./status') as typeof import('./status'),
  statusOffline: () => require('./status-offline') as typeof import('./status-offline'),
  watch: () => require('./watch') as typeof import('./watch'),
};
const connectBus = (address: string): Promise<dbus.MessageBus> => lazy.systemd().connectBus(address);
// (`sbctl status` alone is answered before this file loads: main.ts, status-fast.ts)

function size(value: string): number {
  const bytes = parseSize(value);
  if (bytes === undefined) throw new InvalidArgumentError('expected a size such as 512M, 4G, 1048576 or infinity.');
  return bytes;
}

function durationS(value: string): number {
  const s = parseDurationS(value);
  if (s === undefined) throw new InvalidArgumentError('expected a duration such as 10s, 2m or 500ms.');
  return s;
}

function nonNegativeInt(value: string): number {
  if (!/^\d+$/.test(value)) throw new InvalidArgumentError('expected a notice id: a whole number (0 for all).');
  return Number(value);
}

function positiveInt(value: string): number {
  if (!/^[1-9]\d*$/.test(value)) throw new InvalidArgumentError('expected a whole number, 1 or more.');
  return Number(value);
}
/** A whole number of at least `min`, for an option whose error names `what`. */
const wholeNumber = (what: string, min: number) => (value: string): number => {
  if (!/^\d+$/.test(value) || Number(value) < min) throw new InvalidArgumentError(`expected ${what}: a whole number, at least ${min}.`);
  return Number(value);
};
function positiveNumber(value: string): number {
  const n = Number(value);
  if (!Number.isFinite(n) || n <= 0) throw new InvalidArgumentError('expected a positive number, e.g. 30 or 0.5.');
  return n;
}

function config(file: string | undefined): Config {
  try {
    return lazy.config().loadConfig(file ?? defaultConfigPath(), file !== undefined);
  } catch (err) {
    if (err instanceof lazy.config().ConfigError) throw new UsageError(`sbctl: bad config: ${err.message}`);
    throw err;
  }
}

const connect = (): Promise<DbusUserManager> => lazy.systemd().DbusUserManager.connect(userBusAddress(process.env));
const say = (line: string): void => {
  process.stdout.write(`${line}\n`);
};

export function buildProgram(setExit: (code: number) => void): Command {
  const program = new Command('sbctl')
    .description('Control sessionbrake: run sessions under a memory brake, and see what sbd does about them.')
    .option('-c, --config <file>', `config file (default: ${defaultConfigPath()})`)
    .version(VERSION)
    .enablePositionalOptions()
    .showHelpAfterError('(run sbctl help for usage)')
    .addHelpText('after', `
Exit codes: 0 done, 1 failed, 2 bad arguments or config, 3 sbd not running (status),
4 no such session (status). Each command has its own --help.

Examples:
  sbctl run --memory-high 4G --memory-max 6G --heartbeat ~/.agent/beat -- claude
  sbctl status --json
  sbctl install --now`);

  program
    .command('run')
    .description('Run a command as a new session: a scope in the sessions slice, on this terminal, with SESSIONBRAKE_SESSION set. Exits with the command\'s exit code. Works whether or not sbd runs.')
    .option('-n, --name <name>', 'session name; the scope is NAME.scope (default: the command name and a random suffix)')
    .option('-s, --slice <slice>', 'slice to run in (default: the first slice of the config, sessions.slice)')
    .addOption(new Option('--memory-high <size>', 'the brake (MemoryHigh): above it the kernel throttles the session').argParser(size))
    .addOption(new Option('--memory-max <size>', 'the ceiling (MemoryMax): above it the kernel kills').argParser(size))
    .addOption(new Option('--swap-max <size>', 'MemorySwapMax, for instance 0 for no swap').argParser(size))
    .option('--heartbeat <path>', 'a file the agent touches while it works (for the freeze watch); "working" as its first word claims work in progress')
    .option('--no-reap', 'when the agent exits, tell about what it left running instead of stopping it')
    .argument('<command...>', 'the command and its arguments, after --')
    .passThroughOptions()
    .action(async (argv: string[], o: { name?: string; slice?: string; memoryHigh?: number; memoryMax?: number; swapMax?: number; heartbeat?: string; reap: boolean }) => {
      const cfg = config(program.opts<{ config?: string }>().config);
      const code = await lazy.run().runSession(
        {
          argv,
          slice: o.slice ?? cfg.slices[0] ?? 'sessions.slice',
          ...(o.name !== undefined ? { name: o.name } : {}),
          ...(o.memoryHigh !== undefined ? { memoryHigh: o.memoryHigh } : {}),
          ...(o.memoryMax !== undefined ? { memoryMax: o.memoryMax } : {}),
          ...(o.swapMax !== undefined ? { swapMax: o.swapMax } : {}),
          ...(o.heartbeat !== undefined ? { heartbeat: o.heartbeat } : {}),
          reap: o.reap,
        },
        await connect(),
        process.env,
      );
      setExit(code);
    });

  program
    .command('status')
    .description('Show sbd\'s health and one row per session: state, memory and brake, pressure, processes, biggest command, heartbeat. Without sbd, sessions are read straight from systemd.')
    .argument('[session]', 'show only this session (name or unit)')
    .option('--json', 'machine-readable output')
    .action(async (session: string | undefined, o: { json?: boolean }) => {
      const bus = await connectBus(userBusAddress(process.env));
      try {
        setExit(await lazy.status().status(bus, async () => {
          const cfg = config(program.opts<{ config?: string }>().config);
          const manager = await lazy.systemd().DbusUserManager.attach(bus);
          return lazy.statusOffline().reportWithoutService(manager, cfg);
        }, session, o.json === true));
      } finally {
        bus.disconnect();
      }
    });

  program
    .command('watch')
    .description('Stream sbd\'s incidents as they happen (standing still, brake raised, command stopped, ...), one per line, until interrupted.')
    .option('--json', 'one JSON object per line, for tools')
    .action(async (o: { json?: boolean }) => {
      const bus = await connectBus(userBusAddress(process.env));
      setExit(await lazy.watch().watchIncidents(bus, o.json === true, say));
      bus.disconnect();
    });

  const monitor = program
    .command('monitor')
    .description('Background work of a session\'s agent, owned by sbd: start a process (a transient service of the session\'s slice), tail a file, poll a probe locally or over ssh (a transient timer and service), watch a file\'s state, an http endpoint or a process of yours; list, inspect and stop them; recover what waits; collect old records. Notices of matching output go to the session\'s inbox (sbctl inbox). The session is --session or $SESSIONBRAKE_SESSION.');
  const common = (c: Command): Command =>
    c
      .option('--session <name>', 'the session (default: $SESSIONBRAKE_SESSION)')
      .option('--label <text>', 'a name for it in lists and notices')
      .addOption(new Option('--reuse <mode>', 'when the same monitor already runs').choices(['return-existing', 'replace', 'parallel']).default('return-existing'))
      .option('--reuse-key <key>', 'find the existing one by this key instead of by what it watches')
      .option('--notify-on <regex...>', 'tell new output lines matching any of these')
      .addOption(new Option('--coalesce <seconds>', 'matches within this span make one notice').argParser(durationS))
      .addOption(new Option('--max-lines <n>', 'lines per notice at most').argParser(nonNegativeInt))
      .option('--expires-at <time>', 'stop it then (ISO 8601 with a zone, e.g. 2026-12-01T06:00:00Z); one notice says so')
      .addOption(new Option('--heartbeat-minutes <n>', 'a notice this often that it is alive and what it last saw (skipped when it told something else within that time)').argParser(positiveNumber))
      .option('--json', 'machine-readable output');
  type Common = { session?: string; label?: string; reuse: string; reuseKey?: string; notifyOn?: string[]; coalesce?: number; maxLines?: number; expiresAt?: string; heartbeatMinutes?: number; json?: boolean };
  const shared = (o: Common): Record<string, unknown> => ({
    reuse: o.reuse,
    ...(o.label !== undefined ? { label: o.label } : {}),
    ...(o.reuseKey !== undefined ? { reuseKey: o.reuseKey } : {}),
    ...(o.notifyOn !== undefined ? { notifyOn: o.notifyOn } : {}),
    ...(o.coalesce !== undefined ? { coalesceSeconds: o.coalesce } : {}),
    ...(o.maxLines !== undefined ? { maxLines: o.maxLines } : {}),
    ...(o.expiresAt !== undefined ? { expiresAt: o.expiresAt } : {}),
    ...(o.heartbeatMinutes !== undefined ? { heartbeatMinutes: o.heartbeatMinutes } : {}),
  });
  const withBus = async (f: (bus: dbus.MessageBus) => Promise<number>): Promise<void> => {
    const bus = await connectBus(userBusAddress(process.env));
    try {
      setExit(await f(bus));
    } finally {
      bus.disconnect();
    }
  };
  common(monitor.command('start').description('Start CMD as a monitored transient service of the session (its own brake, cleaned up whole, restarted on a crash up to a limit, then quarantined). Its output goes to a file sbd tails.'))
    .option('--detached', 'keep it running after the session ends')
    .argument('<cmd...>', 'the program and its arguments (after --)')
    .action(async (cmd: string[], o: Common & { detached?: boolean }) => withBus((bus) => lazy.monitor().monitorStart(bus, o.session, { type: 'spawn', argv: cmd, ...shared(o), ...(o.detached ? { detached: true } : {}) }, o.json === true, process.env, say)));
  common(monitor.command('tail').description('Tell lines appended to FILE that match --notify-on (by byte offset: after a restart of sbd it resumes where it stopped).'))
    .option('--from-start', 'read the file from its start, not from its end')
    .argument('<file>', 'the file (absolute, or relative to here)')
    .action(async (file: string, o: Common & { fromStart?: boolean }) => withBus((bus) => lazy.monitor().monitorStart(bus, o.session, { type: 'tail', path: path.resolve(file), ...shared(o), ...(o.fromStart ? { fromStart: true } : {}) }, o.json === true, process.env, say)));
  const probe = (c: Command): Command =>
    common(c)
      .addOption(new Option('--interval <seconds>', 'between the starts of two ticks (at least 5 s)').argParser(durationS).makeOptionMandatory())
      .addOption(new Option('--timeout <seconds>', 'a tick running longer is stopped and counts as failed; shorter than --interval (default: half of it)').argParser(durationS))
      .addOption(new Option('--max-failures <n>', 'failed ticks in a row before the monitor is suspended (default 5)').argParser(positiveInt));
  type Probe = Common & { interval: number; timeout?: number; maxFailures?: number };
  const probeOptions = (o: Probe): Record<string, unknown> => ({
    intervalS: o.interval,
    ...(o.timeout !== undefined ? { timeoutS: o.timeout } : {}),
    ...(o.maxFailures !== undefined ? { maxConsecutiveFailures: o.maxFailures } : {}),
    ...shared(o),
  });
  const probeHelp = [
    '',
    'Each tick is a transient service of the session\'s slice started by a transient systemd timer',
    '(sb-monitor-ID.timer and .service): ticks never overlap, a tick longer than --timeout is stopped.',
    'Its output is appended to a file sbd follows: lines matching --notify-on reach the inbox.',
    'A failed tick (non-zero exit, a signal, the timeout) makes the next one wait longer (exponential',
    'backoff with jitter, up to 30 min); --max-failures failed ticks in a row suspend the monitor',
    '(its timer stopped). The inbox is told once when failures begin, once when they end, and once',
    'on suspension. After sbd restarts, a local poll waits for sbctl monitor recover approve;',
    'an ssh probe resumes.',
  ].join('\n');
  probe(monitor.command('poll').description('Run a fast read-only probe every --interval seconds (a probe with work in it, a shell or shell syntax is quarantined with the reason).'))
    .argument('<cmd...>', 'the probe and its arguments (after --); the program is found on sbd\'s PATH unless absolute')
    .addHelpText('after', `${probeHelp}\n\nExample:\n  sbctl monitor poll --interval 30s --notify-on 'state: (done|failed)' -- cat /tmp/train/status`)
    .action(async (cmd: string[], o: Probe) => withBus((bus) => lazy.monitor().monitorStart(bus, o.session, { type: 'poll', argv: cmd, ...probeOptions(o) }, o.json === true, process.env, say)));
  probe(monitor.command('ssh').description('Run a read-only probe on HOST over ssh every --interval seconds: a poll of `ssh -o BatchMode=yes -o ConnectTimeout=N HOST -- CMD...` (ssh on sbd\'s PATH; never a prompt).'))
    .argument('<host>', 'the host as ssh takes it (host or user@host; ports and options belong in ~/.ssh/config)')
    .argument('<cmd...>', 'the remote probe and its arguments (after --): plain words only, since the remote shell reads them (letters, digits and _ . , : = @ % + / -)')
    .addHelpText('after', `${probeHelp}\n\nssh's own failure (unreachable host, refused login) exits 255 and counts as a failed tick.\n\nExample:\n  sbctl monitor ssh --interval 60s --notify-on 'FINISHED|Traceback' gpu1 -- tail -n 5 /data/run7/train.log`)
    .action(async (host: string, cmd: string[], o: Probe) => withBus((bus) => lazy.monitor().monitorStart(bus, o.session, { type: 'ssh', host, argv: cmd, ...probeOptions(o) }, o.json === true, process.env, say)));
  common(monitor.command('http').summary('GET an http(s) endpoint every N seconds: status, body matches, backoff, suspension').description('GET URL every --interval seconds from sbd itself (no curl): the status is checked (--expect-status, else any 2xx or 3xx is ok), the body read up to 16 KiB and its lines matched by --notify-on (told when the matching lines change, not every tick). A failure (another status, no answer within --timeout, a refused connection) is told when it starts and when it ends; each failure in a row waits twice as long before the next try (with ±20 % jitter); after --max-failures in a row the monitor is suspended, told once, and asks nothing more. Redirects are not followed. Only scheme://host:port/path of the URL is ever logged or shown (its userinfo and query may carry tokens).'))
    .addOption(new Option('--interval <seconds>', 'between tries while it answers as expected (at least 5 s)').argParser(durationS).makeOptionMandatory())
    .addOption(new Option('--timeout <seconds>', 'the whole exchange, body included, at most this long; shorter than --interval (default: half of it)').argParser(durationS))
    .addOption(new Option('--expect-status <code>', 'the status that is ok (default: any 2xx or 3xx)').argParser(wholeNumber('an http status', 100)))
    .addOption(new Option('--max-failures <n>', 'failures in a row before it is suspended (default 5)').argParser(wholeNumber('a count of failures', 1)))
    .argument('<url>', 'http:// or https://')
    .action(async (url: string, o: Common & { interval: number; timeout?: number; expectStatus?: number; maxFailures?: number }) => withBus((bus) => lazy.monitor().monitorStart(bus, o.session, {
      type: 'http', url, intervalS: o.interval, ...shared(o),
      ...(o.timeout !== undefined ? { timeoutS: o.timeout } : {}),
      ...(o.expectStatus !== undefined ? { expectStatus: o.expectStatus } : {}),
      ...(o.maxFailures !== undefined ? { maxConsecutiveFailures: o.maxFailures } : {}),
    }, o.json === true, process.env, say)));
  common(monitor.command('file').summary('Watch a file\'s state: appears, disappears, changes (size, last lines)').description('Watch FILE\'s state (inotify, no polling): told when it appears, when it disappears, and when it changes (its size or its last lines), with its last lines; with --notify-on, a change is told only when the matching lines among its last lines change, with those. Changes within --coalesce make one notice. FILE need not exist yet; its directory must.'))
    .addOption(new Option('--last-lines <n>', 'how many of its last lines are looked at and told (default 5, at most 50)').argParser(wholeNumber('a number of lines', 0)))
    .argument('<file>', 'the file (absolute, or relative to here)')
    .action(async (file: string, o: Common & { lastLines?: number }) => withBus((bus) => lazy.monitor().monitorStart(bus, o.session, { type: 'file', path: path.resolve(file), ...shared(o), ...(o.lastLines !== undefined ? { lastLines: o.lastLines } : {}) }, o.json === true, process.env, say)));
  common(monitor.command('process').summary('Observe a process of yours (by pid file or name) until it exits; never signalled').description('Observe one local process of yours until it exits (a pidfd: told at once, no polling); it is never signalled, stopping the monitor leaves it running. Found by --pid-file, or by --match NAME: its name exactly as /proc/PID/comm shows it (at most 15 characters); a name that several of your processes have is refused with their pids. After a restart of sbd it resumes only if that pid is still the same process (same start time), else it says the process is gone.'))
    .option('--pid-file <file>', 'a file holding its pid')
    .option('--match <name>', 'its name, exactly as /proc/PID/comm shows it')
    .action(async (o: Common & { pidFile?: string; match?: string }) => {
      if ((o.pidFile === undefined) === (o.match === undefined)) throw new UsageError('sbctl monitor process: give exactly one of --pid-file FILE or --match NAME');
      const which = o.pidFile !== undefined ? { pidFile: path.resolve(o.pidFile) } : { match: o.match };
      await withBus((bus) => lazy.monitor().monitorStart(bus, o.session, { type: 'process', ...which, ...shared(o) }, o.json === true, process.env, say));
    });
  monitor
    .command('list')
    .description('The session\'s monitors: handle, label, type, state and why.')
    .option('--session <name>', 'the session (default: $SESSIONBRAKE_SESSION)')
    .option('--all', 'every session\'s')
    .option('--json', 'machine-readable output')
    .action(async (o: { session?: string; all?: boolean; json?: boolean }) => withBus((bus) => lazy.monitor().monitorList(bus, o.session, o.all === true, o.json === true, process.env, say)));
  monitor
    .command('stop')
    .description('Stop one monitor: its own unit (its whole process tree) or its watch; nothing else. With --all, every monitor of the session that runs or waits, and only with --confirm.')
    .argument('[handle]', 'its handle, id or label (sbctl monitor list shows them)')
    .option('--session <name>', 'the session (default: $SESSIONBRAKE_SESSION)')
    .option('--all', 'every monitor of this session (never another session\'s); needs --confirm')
    .option('--confirm', 'with --all: do it; without, --all only says what it would stop and exits 2')
    .option('--json', 'machine-readable output')
    .addHelpText('after', `
A stop is systemd's: the monitor's own unit is stopped (KillMode=control-group: its whole process
tree, nothing outside it), or its file watch removed. sbd signals nothing itself.

Exit codes: 0 stopped, 2 unknown handle, or --all without --confirm (then it lists what it would
stop and stops nothing), 3 sbd not running.

Examples:
  sbctl monitor stop 3f2a9c1e
  sbctl monitor stop --all              # lists this session's monitors; stops nothing
  sbctl monitor stop --all --confirm --json`)
    .action(async (handle: string | undefined, o: { session?: string; all?: boolean; confirm?: boolean; json?: boolean }) => {
      if (o.all && handle !== undefined) throw new UsageError('sbctl monitor stop: give a handle or --all, not both');
      if (!o.all && handle === undefined) throw new UsageError('sbctl monitor stop: which monitor? give its handle (sbctl monitor list), or --all --confirm');
      if (!o.all && o.confirm) throw new UsageError('sbctl monitor stop: --confirm goes with --all');
      await withBus((bus) => (o.all
        ? lazy.monitor().monitorStopAll(bus, o.session, o.confirm === true, o.json === true, process.env, say, (l) => process.stderr.write(`${l}\n`))
        : lazy.monitor().monitorStop(bus, o.session, handle as string, o.json === true, process.env, say)));
    });
  monitor
    .command('inspect')
    .description('A monitor\'s full receipt: who runs it (sbd\'s bus name and start: the owner\'s epoch), its unit and invocation id, its main pid (from systemd), the command hash (never the command line), when it was created, started and ended, its exit code and status, the signals sbd sent (none: a stop is systemd\'s), ticks, failures, truncations, the offset read up to, and its expiry.')
    .argument('<handle>', 'its handle, id or label')
    .option('--session <name>', 'the session (default: $SESSIONBRAKE_SESSION)')
    .option('--json', 'machine-readable output (times as epoch ms, none as null)')
    .addHelpText('after', `
Exit codes: 0 shown, 2 unknown handle, 3 sbd not running.

Example:
  sbctl monitor inspect 3f2a9c1e --json`)
    .action(async (handle: string, o: { session?: string; json?: boolean }) => withBus((bus) => lazy.monitor().monitorInspect(bus, o.session, handle, o.json === true, process.env, say)));
  const recover = monitor
    .command('recover')
    .description('What waits for a decision before it runs again, and why: a spawn quarantined by its crash-loop fuse, a monitor suspended after failures in a row, a local poll awaiting confirmation after sbd restarted. Then approve or reject each.')
    .option('--session <name>', 'the session (default: $SESSIONBRAKE_SESSION)')
    .option('--json', 'machine-readable output')
    .addHelpText('after', `
  approve HANDLE   run it again: a quarantined spawn gets a fresh start of its unit (its failed
                   state reset first); a suspended or waiting monitor begins again. A monitor
                   quarantined for what it would run (a poll with work in it) is never approved.
  reject HANDLE    stop whatever is left of it and move its record to archive/ (never deleted).

Exit codes: 0 done, 2 unknown handle or not waiting, 3 sbd not running.

Examples:
  sbctl monitor recover
  sbctl monitor recover approve 3f2a9c1e
  sbctl monitor recover reject 3f2a9c1e --json`)
    .action(async (o: { session?: string; json?: boolean }) => withBus((bus) => lazy.monitor().monitorRecoverList(bus, o.session, o.json === true, process.env, say)));
  for (const verb of ['approve', 'reject'] as const) {
    recover
      .command(verb)
      .description(verb === 'approve'
        ? 'Run a waiting monitor again: a quarantined spawn gets a fresh start of its unit; a suspended or awaiting-confirmation one begins again through its runner.'
        : 'Stop whatever is left of a waiting monitor and move its record to archive/ with why (never deleted).')
      .argument('<handle>', 'its handle, id or label (sbctl monitor recover lists them)')
      .option('--session <name>', 'the session (default: $SESSIONBRAKE_SESSION)')
      .option('--json', 'machine-readable output')
      .action(async (handle: string, o: { session?: string; json?: boolean }) => withBus((bus) => lazy.monitor().monitorRecover(bus, verb, o.session, handle, o.json === true, process.env, say)));
  }
  monitor
    .command('gc')
    .description(`Collect monitor records: corrupt ones, orphans (their session ended, or its name now belongs to another invocation), and monitors that ended more than ${FINISHED_RETENTION_MS / 3_600_000} h ago. A dry run by default: it lists what it would archive. All your sessions' records, not one session's.`)
    .option('--dry-run', 'list what would be archived, and why (the default)')
    .option('--apply', 'archive them: moved to archive/ beside the records with why, never deleted')
    .option('--json', 'machine-readable output')
    .addHelpText('after', `
gc never stops anything and never touches a unit: a record whose unit still runs (a detached
spawn outliving its session) is kept and said ("kept"); stop it first.

Exit codes: 0 done, 2 --dry-run with --apply, 3 sbd not running.

Examples:
  sbctl monitor gc
  sbctl monitor gc --apply --json`)
    .action(async (o: { dryRun?: boolean; apply?: boolean; json?: boolean }) => {
      if (o.dryRun && o.apply) throw new UsageError('sbctl monitor gc: --dry-run or --apply, not both');
      await withBus((bus) => lazy.monitor().monitorGc(bus, o.apply === true, o.json === true, say));
    });

  program
    .command('completion')
    .description('Print a completion script for the shell: subcommands, options, session names (for --session and status) and the handles of this session\'s monitors for monitor stop, inspect and recover (asked of sbd as you complete; nothing when sbd is not running).')
    .addArgument(new Argument('<shell>', 'the shell').choices(['bash', 'zsh']))
    .addHelpText('after', `
Examples:
  eval "$(sbctl completion bash)"                 # in ~/.bashrc
  sbctl completion bash > ~/.local/share/bash-completion/completions/sbctl
  eval "$(sbctl completion zsh)"                  # in ~/.zshrc`)
    .action((shell: 'bash' | 'zsh') => {
      say(shell === 'bash' ? lazy.completion().bashCompletion(program) : lazy.completion().zshCompletion(program));
    });
  program
    .command('complete-handles', { hidden: true })
    .description('The handles a completion offers, one per line; nothing on any failure (used by the completion script).')
    .option('--session <name>', 'the session (default: $SESSIONBRAKE_SESSION)')
    .addOption(new Option('--set <set>', 'which handles').choices(['waiting', 'live', 'all']).default('all'))
    .action(async (o: { session?: string; set: HandleSet }) => {
      setExit(await lazy.completion().completeHandles(() => connectBus(userBusAddress(process.env)), o.session ?? process.env.SESSIONBRAKE_SESSION, o.set, say));
    });

  program
    .command('complete-sessions', { hidden: true })
    .description('The names of the sessions sbd watches, one per line; nothing on any failure (used by the completion script).')
    .action(async () => {
      setExit(await lazy.completion().completeSessions(() => connectBus(userBusAddress(process.env)), say));
    });

  program
    .command('inbox')
    .description('The notices for a session\'s agent: what sbd did to the session and why (a raised brake, a stopped build and how to rerun it), and what its monitors saw. Each has an id: --since ID shows only what came after it. Works whether sbd runs or not.')
    .option('--session <name>', 'the session (default: $SESSIONBRAKE_SESSION, set inside every session sbctl run starts)')
    .addOption(new Option('--since <id>', 'only notices after this id').argParser(nonNegativeInt).default(0))
    .option('--follow', 'then wait for new notices and print each as it comes (inotify, no polling), until interrupted')
    .option('--json', 'one JSON object per line, for tools')
    .action(async (o: { session?: string; since: number; follow?: boolean; json?: boolean }) => {
      setExit(await lazy.inbox().runInbox({ session: o.session, sinceId: o.since, follow: o.follow === true, json: o.json === true }, process.env, say));
    });

  program
    .command('reap')
    .description('Stop what a session left running (its scope\'s processes besides a live agent, and every process of yours carrying its SESSIONBRAKE_SESSION marker, wherever it moved), or every process of yours working inside a checkout (its cwd under PATH, or a file under PATH open). SIGTERM, then SIGKILL after --timeout, through pidfds. Never touches other users\' processes.')
    .option('--session <name>', 'the session whose leftovers to stop')
    .option('--checkout <path>', 'stop what works inside this directory')
    .option('--dry-run', 'only list what would be stopped')
    .addOption(new Option('--timeout <duration>', 'between SIGTERM and SIGKILL').argParser(durationS).default(10, '10s'))
    .option('--json', 'machine-readable output')
    .action(async (o: { session?: string; checkout?: string; dryRun?: boolean; timeout: number; json?: boolean }) => {
      setExit(await lazy.reap().runReap({ ...(o.session !== undefined ? { session: o.session } : {}), ...(o.checkout !== undefined ? { checkout: o.checkout } : {}) },
        { dryRun: o.dryRun === true, timeoutS: o.timeout, json: o.json === true }, connect, process.env, say));
    });

  program
    .command('holders')
    .description('List the processes of yours working inside PATH (cwd under it, or a file under it open): pid, program, CPU, age, session. Exit 1 when held, 0 when free, so a script can refuse to remove a checkout while something works in it.')
    .argument('<path>', 'the checkout')
    .option('--json', 'machine-readable output')
    .action((p: string, o: { json?: boolean }) => {
      setExit(lazy.reap().runHolders(p, o.json === true, say));
    });

  program
    .command('install')
    .description('Install the user units (sbd.service, sessions.slice) into your systemd user directory and enable sbd.')
    .option('--now', 'start (or restart) sbd as well')
    .action(async (o: { now?: boolean }) => {
      const manager = await connect();
      try {
        await lazy.install().install(manager, process.env, o.now === true, say);
      } finally {
        manager.close();
      }
    });

  program
    .command('uninstall')
    .description('Stop and disable sbd and remove its unit files. Running sessions are left alone.')
    .action(async () => {
      const manager = await connect();
      try {
        await lazy.install().uninstall(manager, process.env, say);
      } finally {
        manager.close();
      }
    });

  program
    .command('doctor')
    .description('Check what sbd needs from this machine: cgroup v2, delegated memory controller, PSI and its triggers, the user bus, linger, the unit, the config.')
    .option('--json', 'machine-readable output')
    .action(async (o: { json?: boolean }) => {
      const checks = await lazy.doctor().runChecks(process.env, program.opts<{ config?: string }>().config);
      say(o.json ? JSON.stringify(checks, null, 2) : lazy.doctor().formatChecks(checks));
      setExit(checks.every((c) => c.ok) ? 0 : 1);
    });
  return program;
}

/** sbctl with every command (commander): the exit code. */
export async function main(argv: string[] = process.argv): Promise<number> {
  let exit = 0;
  const program = buildProgram((code) => {
    exit = code;
  });
  program.exitOverride();
  for (const cmd of program.commands) cmd.exitOverride();
  try {
    await program.parseAsync(argv);
    return exit;
  } catch (err) {
    if (err instanceof CommanderError) return err.exitCode === 0 ? 0 : 2; // usage errors: exit 2
    process.stderr.write(`${err instanceof Error ? err.message : String(err)}\n`);
    return exitCodeOf(err);
  }
}
