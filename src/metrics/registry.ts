/**
 * sbd's metrics (issue 14; docs/metrics.md lists each): one prom-client registry, every series
 * carrying the constant `user` label (several users' sbd share one node_exporter). Counters move
 * with incidents and verdicts; gauges are computed from sbd's state when the metrics are read (a
 * textfile write or an HTTP scrape), never by a timer. Labels are bounded: no session name
 * unless metrics.perSession is on.
 */
import { Counter, Gauge, Histogram, Registry } from 'prom-client';
import { monitorRecordSchema } from '../monitor/store';
import type { Incident } from '../daemon/incidents';
import { BRAKE_SCOPES, FREEZE_KINDS, STOP_REASONS, VERDICT_TYPES, incrementsFor } from './from-incident';
import { type EpisodeScope, EPISODE_SCOPES } from './from-verdict';
import { registerProcessMetrics } from './process';

/** Every name starts so: node_exporter serves many programs' files side by side. */
export const PREFIX = 'sessionbrake_';

/**
 * The onset-to-verdict histogram's buckets, in s: two 2 s windows make a verdict about 4 s after
 * its onset (measured in the guest: 4.1 s); the fine steps below 3 s tell a faster detector from
 * this one, 10 and 30 s catch a starved event loop or a slow fallback measure.
 */
export const ONSET_TO_VERDICT_BUCKETS = [0.5, 1, 1.5, 2, 3, 5, 10, 30];

/** A session's states as `sbctl status` shows them (a session of sbd's own watch, never "unwatched"). */
export const SESSION_STATES = ['ok', 'warm', 'hot', 'standing-still', 'stopping'] as const;
export type SessionState = (typeof SESSION_STATES)[number];

/** How a session is fed: woken by its PSI trigger, or sampled on a timer (no PSI, or no trigger allowed). */
export const FEED_MODES = ['psi-trigger', 'sampling'] as const;

/** A monitor record's lifecycle (issue 13). */
export const MONITOR_STATES = monitorRecordSchema.shape.lifecycle.options;

/** What sbd is now, read at each collection: plain data, gathered by the service. */
export interface SbdView {
  sessions: Array<{
    name: string;
    slice: string;
    state: SessionState;
    /** 'psi' or 'timer' (SessionFeed.mode); undefined before its feed started. */
    feed: 'psi' | 'timer' | undefined;
    /** How long it has stood still (its deadline's age), undefined when it does not. */
    standingStillS: number | undefined;
    memoryHighBytes: number;
    /** memory.current; read only for the per-session series. */
    currentBytes?: number | undefined;
  }>;
  /** Each monitor's lifecycle. */
  monitors: string[];
}

export interface SbdMetricsOptions {
  /** The user sbd runs as: the constant `user` label. */
  user: string;
  version: string;
  /** detector.graceS (doubled on the fallback measure: docs/metrics.md). */
  graceS: number;
  /** The configured slices: each gets a series per state, zero or not, so that a query finds it. */
  slices: readonly string[];
  perSession: boolean;
  /** sbd's state now (perSession: with each session's memory.current). */
  view(perSession: boolean): SbdView;
}

export class SbdMetrics {
  readonly registry = new Registry();
  private readonly verdicts: Counter<'verdict'>;
  private readonly episodes: Counter<'scope'>;
  private readonly raises: Counter<'scope'>;
  private readonly lowerings: Counter<'scope'>;
  private readonly stops: Counter<'reason'>;
  private readonly reaped: Counter;
  private readonly freeze: Counter<'kind'>;
  private readonly oomKills: Counter;
  private readonly notifyFailures: Counter;
  private readonly textfileWrites: Counter;
  private readonly onsetToVerdict: Histogram;
  private readonly sessions: Gauge<'state' | 'slice'>;
  private readonly feeds: Gauge<'mode'>;
  private readonly longest: Gauge;
  private readonly monitors: Gauge<'state'>;
  private readonly perSession: { high: Gauge<'session'>; current: Gauge<'session'>; still: Gauge<'session'> } | undefined;

  constructor(private readonly opts: SbdMetricsOptions) {
    const registers = [this.registry];
    this.registry.setDefaultLabels({ user: opts.user });
    const counter = <L extends string>(name: string, help: string, labelNames: readonly L[] = [], values: ReadonlyArray<Record<L, string>> = []): Counter<L> => {
      const c = new Counter<L>({ name: PREFIX + name, help, labelNames, registers });
      for (const v of values) c.inc(v as never, 0); // every series there from the start: rate() and "before" need it
      return c;
    };
    const each = <K extends string>(key: K, vals: readonly string[]): Array<Record<K, string>> => vals.map((v) => ({ [key]: v }) as Record<K, string>);

    new Gauge({ name: `${PREFIX}build_info`, help: 'Always 1; the version of sbd in the label.', labelNames: ['version'], registers }).set({ version: opts.version }, 1);
    this.sessions = new Gauge({ name: `${PREFIX}sessions`, help: 'Sessions sbd watches, by state (as sbctl status shows it) and slice.', labelNames: ['state', 'slice'], registers });
    this.feeds = new Gauge({ name: `${PREFIX}feed_sessions`, help: 'Sessions by how they are fed: psi-trigger (woken by the kernel) or sampling (on a timer: no PSI, or no trigger allowed).', labelNames: ['mode'], registers });
    this.episodes = counter('stall_episodes_total', 'Stall episodes begun: a session, a slice or the machine standing still.', ['scope'], each('scope', EPISODE_SCOPES));
    this.verdicts = counter('verdicts_total', 'Verdicts told, by the incident type of the verdict.', ['verdict'], each('verdict', VERDICT_TYPES));
    this.raises = counter('brake_raises_total', "Brakes (MemoryHigh) raised, a session's or a slice's (observe-only: none).", ['scope'], each('scope', BRAKE_SCOPES));
    this.lowerings = counter('brake_lowerings_total', 'Raised brakes lowered back a step (observe-only: none).', ['scope'], each('scope', BRAKE_SCOPES));
    this.stops = counter('stops_total', "Biggest commands stopped (SIGTERM, SIGKILL after the grace), by why: the session's own brake, its slice's verdict on the culprit, the machine nearly out of memory.", ['reason'], each('reason', STOP_REASONS));
    this.reaped = counter('leftovers_reaped_total', "Processes stopped after their session's agent exited.", [], [{}]);
    this.freeze = counter('freeze_incidents_total', 'Freeze incidents (reminders not counted again), by kind.', ['kind'], each('kind', FREEZE_KINDS));
    this.oomKills = counter('oom_kills_total', "Processes the kernel's OOM killer killed in sessions (memory.events.local oom_kill).", [], [{}]);
    this.notifyFailures = counter('notify_command_failures_total', 'Notify-command runs that failed (could not start, exited non-zero, timed out) and incidents dropped because 4 were running.', [], [{}]);
    this.textfileWrites = counter('textfile_writes_total', "Writes of sbd's textfile for node_exporter.", [], [{}]);
    this.onsetToVerdict = new Histogram({ name: `${PREFIX}onset_to_verdict_seconds`, help: "From a stall's onset (the start of its first hot window) to the session's standing-still verdict, on the monotonic clock.", buckets: ONSET_TO_VERDICT_BUCKETS, registers });
    this.longest = new Gauge({ name: `${PREFIX}standing_still_longest_seconds`, help: 'The longest current standing-still of any session (its deadline running), 0 when none.', registers });
    new Gauge({ name: `${PREFIX}grace_seconds`, help: 'The configured grace between standing still and the stop (detector.graceS; doubled on the fallback measure).', registers }).set(opts.graceS);
    this.monitors = new Gauge({ name: `${PREFIX}monitors`, help: "The agents' background monitors on record, by lifecycle state.", labelNames: ['state'], registers });
    this.perSession = opts.perSession
      ? {
          high: new Gauge({ name: `${PREFIX}session_memory_high_bytes`, help: "The session's brake (MemoryHigh) now.", labelNames: ['session'], registers }),
          current: new Gauge({ name: `${PREFIX}session_memory_current_bytes`, help: "The session's memory.current.", labelNames: ['session'], registers }),
          still: new Gauge({ name: `${PREFIX}session_standing_still_seconds`, help: 'How long the session has stood still, 0 when it does not.', labelNames: ['session'], registers }),
        }
      : undefined;
    registerProcessMetrics(this.registry, PREFIX);
  }

  /** An incident was told: its counter steps. */
  count(i: Incident): void {
    for (const step of incrementsFor(i)) {
      const labels = step.labels as Record<string, string>;
      switch (step.counter) {
        case 'verdicts': this.verdicts.inc(labels, step.by); break;
        case 'brakeRaises': this.raises.inc(labels, step.by); break;
        case 'brakeLowerings': this.lowerings.inc(labels, step.by); break;
        case 'stops': this.stops.inc(labels, step.by); break;
        case 'leftoversReaped': this.reaped.inc(step.by); break;
        case 'freezeIncidents': this.freeze.inc(labels, step.by); break;
        case 'oomKills': this.oomKills.inc(step.by); break;
      }
    }
  }

  /** A stall episode began. */
  episode(scope: EpisodeScope): void {
    this.episodes.inc({ scope });
  }

  /** A session's standing-still verdict, this long after its onset. */
  verdictAfterOnset(seconds: number): void {
    this.onsetToVerdict.observe(seconds);
  }

  notifyFailed(): void {
    this.notifyFailures.inc();
  }

  textfileWritten(): void {
    this.textfileWrites.inc();
  }

  /** The gauges from sbd's state now. */
  private refresh(): void {
    const view = this.opts.view(this.perSession !== undefined);
    this.sessions.reset();
    const slices = new Set([...this.opts.slices, ...view.sessions.map((s) => s.slice)]);
    for (const slice of slices) for (const state of SESSION_STATES) this.sessions.set({ state, slice }, 0);
    for (const s of view.sessions) this.sessions.inc({ state: s.state, slice: s.slice });
    this.feeds.reset();
    for (const mode of FEED_MODES) this.feeds.set({ mode }, 0);
    for (const s of view.sessions) if (s.feed) this.feeds.inc({ mode: s.feed === 'psi' ? 'psi-trigger' : 'sampling' });
    this.longest.set(Math.max(0, ...view.sessions.map((s) => s.standingStillS ?? 0)));
    this.monitors.reset();
    for (const state of MONITOR_STATES) this.monitors.set({ state }, 0);
    for (const state of view.monitors) this.monitors.inc({ state });
    if (this.perSession) {
      const { high, current, still } = this.perSession;
      for (const g of [high, current, still]) g.reset();
      for (const s of view.sessions) {
        high.set({ session: s.name }, s.memoryHighBytes);
        if (s.currentBytes !== undefined) current.set({ session: s.name }, s.currentBytes);
        still.set({ session: s.name }, s.standingStillS ?? 0);
      }
    }
  }

  /** The exposition text (Prometheus text format 0.0.4, no timestamps), the gauges computed now. */
  async render(): Promise<string> {
    this.refresh();
    return this.registry.metrics();
  }

  get contentType(): string {
    return this.registry.contentType;
  }
}

/**
 * The names of the metric families sbd exports (as in the exposition's TYPE lines; a histogram's
 * series add _bucket, _sum and _count), the per-session ones included when `perSession`. For
 * tests of what reads them (alert rules, the dashboard): the registry itself, not a copy.
 */
export function metricNames(opts: { perSession?: boolean } = {}): string[] {
  const m = new SbdMetrics({ user: 'u', version: '0', graceS: 1, slices: [], perSession: opts.perSession ?? false, view: () => ({ sessions: [], monitors: [] }) });
  return m.registry.getMetricsAsArray().map((x) => x.name).sort();
}

/** The series names a query can use: metricNames(), each histogram's as its _bucket, _sum and _count. */
export function seriesNames(opts: { perSession?: boolean } = {}): string[] {
  const m = new SbdMetrics({ user: 'u', version: '0', graceS: 1, slices: [], perSession: opts.perSession ?? false, view: () => ({ sessions: [], monitors: [] }) });
  return m.registry
    .getMetricsAsArray()
    .flatMap((x) => ((x as unknown as { type: string }).type === 'histogram' ? [`${x.name}_bucket`, `${x.name}_sum`, `${x.name}_count`] : [x.name]))
    .sort();
}
