/**
 * The service's configuration: every threshold of design.md, named after what it means, with
 * the measured default and why it has that value. Sizes may be written "512M" or as bytes.
 */
import { z } from 'zod';
import { parseSize } from '../util/size';

const size = z.union([z.number().int().nonnegative(), z.string()]).transform((v, ctx) => {
  if (typeof v === 'number') return v;
  const bytes = parseSize(v);
  if (bytes === undefined) {
    ctx.addIssue({ code: 'custom', message: 'a size such as "512M", "4G" or a number of bytes' });
    return z.NEVER;
  }
  return bytes;
});
const share = z.number().min(0).max(1);
/** raise.maxMargin's default: see its comment for the measurement behind it. */
const MAX_MARGIN_DEFAULT = 128 * 2 ** 20;
const seconds = z.number().positive();
/** The log levels sbd knows, most severe first (pino's names). */
export const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace'] as const;

export const detectorSchema = z
  .object({
    /** A window at or above this full-pressure share is hot: a stalled cgroup reads 0.44–0.77, honest work 0.0. */
    tripShare: share.default(0.2),
    /** Below this a window is clear; between clear and trip it is warm and changes nothing. */
    clearShare: share.default(0.1),
    /** Hot windows in a row before a session counts as standing still: one hot window can be a burst. */
    hotWindowsToStall: z.number().int().min(1).default(2),
    /** (anon + shmem) / current at or above this, or the brake is grinding page cache, which is no real stall. */
    anonFuse: share.default(0.9),
    /** At or above this share of its own brake a session counts as the cause of its own pressure. */
    nearOwnBrake: share.default(0.95),
    /** The PSI trigger's window, in s, and the window judged while a deadline runs. 2 s: the shortest PSI window an unprivileged user may arm. */
    windowS: seconds.default(2),
    /**
     * The windows judged from a wake (the trigger, or the own brake firing) to a verdict, in s: the
     * trigger is only the wake-up. 0.5 s: PSI's totals are exact at any read, so a short window's
     * share is as true as a 2 s one; it is the kernel's own shortest trigger window and about 10×
     * the guest's timer jitter under emulation (bench/RESULTS.md, issue 15).
     */
    onsetWindowS: seconds.default(0.5),
    /**
     * Hot onset windows in a row before a session counts as standing still: 3 × 0.5 s = 1.5 s of
     * sustained share at or above tripShare. A burst shorter than 0.7 s never trips it, however the
     * windows fall (two 2 s windows: 0.8 s), and a stall of 1.2 s or more always does (two 2 s
     * windows: 2.8 s); the recorded bursts show the margin (npm run bench:margin). Two late
     * windows (sbd behind its feeds) stand still when they hold a stall that on-time windows
     * always catch, 1.2 s of full stall (stall/detector.ts lateRunStandsStill).
     */
    onsetHotWindows: z.number().int().min(1).default(3),
    /**
     * A window below the clear line in which the session's tasks waited for a CPU (its
     * cpu.pressure `some`) at least this share of the window is no evidence either way: warm, not
     * clear. PSI's full memory stall does not count a task waiting in the run queue, so a hog at
     * its brake that got no CPU reads 0.00 though it neither stalled nor made progress. 0.5: such a
     * window left its task half the window or less in which a stall could be counted. A clear
     * window reads near 0 on a machine with CPUs to spare; at most one such window is bridged in a
     * run of hot ones (stall/detector.ts).
     */
    cpuStarvedShare: share.default(0.5),
    /** Grace between standing still and stopping the biggest command: room for a raise to help. */
    graceS: seconds.default(180),
    /**
     * A deadline ends at once when the session is over its own brake with less than this left
     * below its MemoryMax: at MemoryMax the kernel OOM-kills, and systemd 252 then stops the
     * whole scope, agent and MCP servers with it. 64M, half of raise.maxMargin: a brake raised
     * to the margin and holding does not trip it (bench/guest/overshoot-thp.sh, 20 s held at
     * 640M: 22–26 MiB over it in small pages, 36–50 MiB with kernel 6.12 faulting 2 MiB huge
     * pages), while a hog slipping past its brake as CI saw under load (95 MiB over in guest
     * test 50, MemoryMax and an OOM kill in another run) is stopped with 64 MiB still to go.
     */
    nearMemoryMax: size.default(64 * 2 ** 20),
    /** A drop of memory.current this large since the deadline started is progress and ends it. */
    progressDrop: size.default(64 * 2 ** 20),
    /** Quiet time after we lower a brake: lowering a live cgroup's brake manufactures the very signal. */
    muteAfterLowerS: seconds.default(240),
    /** The fallback sampling interval without PSI triggers: the cadence of the design this replaces. */
    fallbackIntervalS: seconds.default(5),
  })
  .strict()
  .refine((d) => d.clearShare <= d.tripShare, { message: 'a value not above detector.tripShare', path: ['clearShare'] })
  .refine((d) => d.onsetWindowS <= d.windowS, { message: 'a value not above detector.windowS (the onset windows are the short ones)', path: ['onsetWindowS'] });

/** Where sbd's own HTTP /metrics may listen: loopback only (other users and hosts read the textfile through node_exporter). */
const LOOPBACK_HOSTS = ['127.0.0.1', '::1'] as const;

/** "127.0.0.1:PORT" or "[::1]:PORT", parsed; anything else (another address, no port) is refused with what to write. */
const httpListen = z.string().transform((v, ctx) => {
  const m = /^(?:(127\.0\.0\.1)|\[(::1)\]):(\d{1,5})$/.exec(v);
  const port = m ? Number(m[3]) : NaN;
  if (!m || port < 1 || port > 65535) {
    ctx.addIssue({ code: 'custom', message: '"127.0.0.1:PORT" or "[::1]:PORT" with a port from 1 to 65535, such as "127.0.0.1:9464" (loopback only: on a shared server other users and Prometheus read the metrics through node_exporter\'s textfile collector, metrics.textfileDirectory)' });
    return z.NEVER;
  }
  return { host: (m[1] ?? m[2]) as (typeof LOOPBACK_HOSTS)[number], port };
});

export const metricsSchema = z
  .object({
    /**
     * node_exporter's textfile collector directory (its --collector.textfile.directory): sbd
     * writes its metrics there, atomically, shortly after each change and once a minute. Unset:
     * no textfile. An absolute path.
     */
    textfileDirectory: z.string().refine((d) => d.startsWith('/'), { message: 'an absolute directory path, such as "/var/lib/prometheus/node-exporter"' }).optional(),
    /**
     * The file's name in that directory. Unset: "sessionbrake-USER.prom" (USER: the user sbd runs
     * as), so that the sbds of several users can share one node_exporter's directory, which it
     * reads flat (only *.prom directly in it).
     */
    textfileName: z.string().regex(/^[A-Za-z0-9_][A-Za-z0-9_.-]*\.prom$/, 'a file name ending in ".prom" (letters, digits, "_", "-", "."), such as "sessionbrake-alice.prom"').optional(),
    /** sbd's own HTTP endpoint, GET /metrics: "127.0.0.1:PORT" or "[::1]:PORT". Unset: off. */
    httpListen: httpListen.optional(),
    /** Series per session (labelled with the session's name): its brake, its memory, how long it has stood still. Off: a fleet's series stay bounded. */
    perSession: z.boolean().default(false),
  })
  .strict();

export const configSchema = z
  .object({
    /** The slices whose scopes and services are sessions. */
    slices: z.array(z.string().regex(/^[A-Za-z0-9:_.\\-]+\.slice$/, 'a slice unit name such as "sessions.slice"')).min(1).default(['sessions.slice']),
    /** Log and show every verdict and would-be action; change nothing. */
    observeOnly: z.boolean().default(false),
    /** sbd's log level (pino's names); `sbd --log-level` overrides it. "debug" logs every window. */
    logLevel: z.enum(LOG_LEVELS, { message: `one of ${LOG_LEVELS.join(', ')}` }).default('info'),
    detector: detectorSchema.default(() => detectorSchema.parse({})),
    raise: z
      .object({
        /** Raise a stalled session's brake at all. */
        enabled: z.boolean().default(true),
        /** Each raise adds this much to the brake. */
        step: size.default(256 * 2 ** 20),
        /** Never raise a brake above this (besides MemoryMax and the slice's room). */
        ceiling: size.default(Infinity),
        /** MemAvailable kept free for the rest of the machine when raising. */
        reserve: size.default(1024 * 2 ** 20),
        /**
         * A raised brake stays this far below MemoryMax (MemoryMax is a wall, not a target: at
         * the wall the kernel OOM-kills, and systemd 252 then stops the whole scope). Measured
         * (bench/guest/overshoot.sh, Debian 12 guest, kernel 6.1, TCG): stress-ng --vm 1
         * --vm-bytes 1500M --vm-keep under MemoryHigh, no swap; memory.peak minus memory.high
         * was 1.8–10.6 MiB at brakes of 64–512M and 4.7–13.1 MiB right after a 256M raise (the
         * worst: 13.1 MiB at 768M). The kernel's throttle grows with the overage relative to
         * the brake, so the overshoot grows with the brake (~1.7 % at 768M): 128M is ten times
         * the worst measured, and covers that share up to brakes of ~7.5G.
         */
        maxMargin: size.default(MAX_MARGIN_DEFAULT),
        /** Clear this long after an episode before the brake is lowered back. */
        lowerAfterClearS: seconds.default(300),
      })
      .strict()
      .default(() => ({ enabled: true, step: 256 * 2 ** 20, ceiling: Infinity, reserve: 1024 * 2 ** 20, maxMargin: MAX_MARGIN_DEFAULT, lowerAfterClearS: 300 })),
    arbitration: z
      .object({
        /** Watch each configured slice and the machine for stalls that are not one session's own (design.md §11). */
        enabled: z.boolean().default(true),
        /** Raise a standing-still slice's own MemoryHigh: off, since an administrator set it. */
        raiseSlice: z.boolean().default(false),
        /** Each slice raise adds this much (within MemAvailable minus raise.reserve). */
        sliceStep: size.default(256 * 2 ** 20),
        /** Growth since the episode began below this is no culprit's: the progress drop's size, within which a working session's allocations come and go. */
        culpritMinGrowth: size.default(64 * 2 ** 20),
        /** MemAvailable below this share of MemTotal: without swap the kernel's OOM killer is seconds away (measured: 25 MiB left when PSI first moved, 40 s of thrash, then the kill), so the culprit is stopped without a grace. earlyoom's SIGKILL line. */
        criticalAvailableShare: share.default(0.05),
        /** Between SIGTERM and SIGKILL when the machine is critical: the OOM killer will not wait 30 s. */
        criticalTermToKillS: seconds.default(2),
      })
      .strict()
      .default({ enabled: true, raiseSlice: false, sliceStep: 256 * 2 ** 20, culpritMinGrowth: 64 * 2 ** 20, criticalAvailableShare: 0.05, criticalTermToKillS: 2 }),
    stop: z
      .object({
        /** Between SIGTERM and SIGKILL: a package manager or an image build needs time to put its house in order. */
        termToKillS: seconds.default(30),
      })
      .strict()
      .default({ termToKillS: 30 }),
    reap: z
      .object({
        /** Stop what a session left running when its agent exits; false: tell instead. */
        enabled: z.boolean().default(true),
        /** Between SIGTERM and SIGKILL for leftovers. */
        termToKillS: seconds.default(10),
      })
      .strict()
      .default({ enabled: true, termToKillS: 10 }),
    freeze: z
      .object({
        /** Pegged: the agent process itself (not its builds) at least this share of a core ... (an agent
         * waiting on a model or a command idles near 0 %; a loop spins near 100 %) */
        peggedCpuShare: z.number().positive().default(0.75),
        /** ... in every check for this long, while the heartbeat was not written: longer than any honest
         * burst of the agent's own work (parsing a large diff, indexing), short enough for one night. */
        peggedForS: seconds.default(300),
        /** Missing: alive, heartbeat not renewed for this long: three missed beats of a once-a-minute heartbeat. */
        missingAfterS: seconds.default(180),
        /** Silent: claims to work, heartbeat not written for this long, nothing open (MCP and language
         * servers do not count): longer than the slowest honest model turn. */
        silentAfterS: seconds.default(1800),
        /** An open incident is told again after this long. */
        reminderS: seconds.default(3600),
        /** How often the freeze watch looks: pegged is judged over intervals this long ("minutes"). */
        checkS: seconds.default(60),
      })
      .strict()
      .default({ peggedCpuShare: 0.75, peggedForS: 300, missingAfterS: 180, silentAfterS: 1800, reminderS: 3600, checkS: 60 }),
    /**
     * An argv run for each incident, with the incident as JSON on stdin. Never a shell string.
     * At most 4 run at once (src/daemon/notify-command.ts); its exit status and first KiB of
     * output are logged, never its argv.
     */
    notifyCommand: z.array(z.string().min(1)).min(1).optional(),
    /** How long the notify command and everything it started may run before its whole group is killed. */
    notifyTimeoutS: seconds.default(10),
    /**
     * How long sbd's READY=1 waits for the adoption of the sessions that were there when it
     * started; the rest are adopted after READY=1 (`sbctl status` says "adopting" until done).
     * systemd fails a start without READY=1 within the unit's TimeoutStartSec (90 s by default).
     * 5 s: about what Node and sbd's modules take to start in the emulated lab guest, so that a
     * start with thousands of sessions is ready within twice one with none (issue 15), and a few
     * hundred are still adopted before READY=1 on a real machine. 0: READY=1 at once.
     */
    adoptBeforeReadyS: z.number().min(0).default(5),
    /** Prometheus metrics (issue 14, docs/metrics.md): the textfile for node_exporter, and an optional HTTP /metrics on loopback. */
    metrics: metricsSchema.default(() => metricsSchema.parse({})),
  })
  .strict();

export type Config = z.infer<typeof configSchema>;
export type DetectorConfig = Config['detector'];
export type MetricsConfig = Config['metrics'];
