/**
 * What sbd does when a slice stands still (design.md §11): raise the slice's own brake where the
 * config allows it and the machine has room; otherwise judge the culprit member and run the same
 * ladder as for one session on it: tell (the slice and the culprit), grace, stop its biggest
 * command. Innocent members are never touched. Observe-only tells every would-be action.
 */
import * as path from 'node:path';
import { SMALLEST_USEFUL_RAISE, wholePages } from '../actions/brake-policy';
import type { Config } from '../config/schema';
import { systemPageSize } from '../proc/system';
import type { Session } from '../sessions/registry';
import { type CulpritChoice, chooseCulprit } from '../slice/culprit';
import { type SliceSample, type SliceVerdict, limitFor, resetSliceEpisode } from '../slice/detector';
import type { SliceFeed } from '../slice/feed';
import type { SessionFeed } from '../stall/feed';
import type { UserManager } from '../systemd/types';
import { formatSize } from '../util/size';
import type { BrakeController } from './controller';
import type { Incident, Incidents } from './incidents';

export interface SliceControllerDeps {
  config: Config;
  manager: UserManager;
  incidents: Incidents;
  brakes: BrakeController;
  /** The session whose cgroup directory is `dir`, with its feed. */
  sessionAt(dir: string): { session: Session; feed: SessionFeed | undefined } | undefined;
  log(level: 'info' | 'warn' | 'debug', msg: string, fields: Record<string, unknown>): void;
}

/** How far the slice's own brake may go up (pure): a step, a margin below its MemoryMax (a wall, not a target), within MemAvailable minus the reserve. */
export function planSliceRaise(s: SliceSample, step: number, reserve: number, maxMargin: number, pageBytes = 4096): { toBytes: number; limitedBy: string } | { toBytes: undefined; why: string } {
  const bounds: Array<[string, number]> = [['step', s.highBytes + step], ["the slice's MemoryMax minus the margin", s.maxBytes - maxMargin], ['MemAvailable minus the reserve', s.currentBytes + s.memAvailableBytes - reserve]];
  let [limitedBy, to] = bounds[0] as [string, number];
  for (const [name, v] of bounds) if (v < to) [limitedBy, to] = [name, v];
  to = wholePages(to, pageBytes);
  if (to - s.highBytes < SMALLEST_USEFUL_RAISE) return { toBytes: undefined, why: `no room: ${limitedBy} allows ${Math.max(0, Math.round((to - s.highBytes) / 2 ** 20))} MiB more` };
  return { toBytes: to, limitedBy };
}

export class SliceController {
  /** Slices whose culprit is being stopped now. */
  private readonly acting = new Set<string>();
  /** Slices told "nothing to stop" in this episode. */
  private readonly toldNothing = new Set<string>();

  constructor(private readonly deps: SliceControllerDeps) {}

  private tell(unit: string, session: string, type: Incident['type'], message: string, figures: Record<string, unknown> = {}): void {
    this.deps.incidents.tell({ type, unit, session, atMs: Date.now(), message, observeOnly: this.deps.config.observeOnly, ...figures });
  }

  /** The culprit now, against the episode's baseline. */
  judge(feed: SliceFeed, sample: SliceSample): CulpritChoice | undefined {
    const ep = feed.state.episode;
    if (!ep) return undefined;
    return chooseCulprit(sample.members, ep.membersAtStart, limitFor(ep.cause, sample), this.deps.config.arbitration.culpritMinGrowth);
  }

  onVerdict(feed: SliceFeed, v: SliceVerdict, sample: SliceSample): void {
    const quiet = v.event === 'window' || v.event === 'first-sample' || v.event === 'short-window';
    this.deps.log(quiet ? 'debug' : 'info', 'slice verdict', { event: 'slice-verdict', slice: feed.slice, verdict: v.event, state: v.state, explain: v.explain });
    switch (v.event) {
      case 'standing-still':
        this.standingStill(feed, v, sample);
        break;
      case 'critical':
      case 'deadline-expired':
        this.act(feed, v, sample);
        break;
      case 'cleared':
      case 'progress':
        this.toldNothing.delete(feed.slice);
        this.tell(feed.slice, feed.slice, 'slice-cleared', v.event === 'progress' ? 'the slice gave memory back: moving again' : `clear again (${v.explain})`);
        break;
      default:
        break;
    }
  }

  private standingStill(feed: SliceFeed, v: SliceVerdict, sample: SliceSample): void {
    const ep = v.episode;
    if (!ep) return;
    const cfg = this.deps.config;
    if (ep.cause === 'slice-brake' && cfg.arbitration.raiseSlice) {
      const plan = planSliceRaise(sample, cfg.arbitration.sliceStep, cfg.raise.reserve, cfg.raise.maxMargin, systemPageSize());
      if (plan.toBytes !== undefined) return this.raiseSlice(feed, sample, plan.toBytes, plan.limitedBy);
      this.deps.log('info', 'cannot raise the slice brake', { slice: feed.slice, why: plan.why });
    }
    const choice = this.judge(feed, sample);
    const deadlineS = Math.round((ep.endsAtMs - ep.startedAtMs) / 1000);
    const figures = { cause: ep.cause, currentBytes: sample.currentBytes, highBytes: sample.highBytes, maxBytes: sample.maxBytes, memAvailableBytes: sample.memAvailableBytes, members: choice?.members, culprit: choice?.culprit?.path, rule: choice?.culprit?.rule, why: choice?.why, deadlineS };
    this.tell(feed.slice, feed.slice, 'slice-standing-still', `${feed.slice} stands still (${ep.cause}): ${choice?.why ?? 'no culprit'}; ${choice?.culprit ? `its biggest command is stopped in ${deadlineS} s unless the slice clears` : 'nothing will be stopped'}`, figures);
    const target = choice?.culprit ? this.deps.sessionAt(path.join(feed.dir, choice.culprit.path)) : undefined;
    if (target && choice?.culprit) {
      this.tell(target.session.unit, target.session.id, 'culprit', `judged the culprit of ${feed.slice}'s stall (${choice.culprit.rule}: ${choice.why}); its biggest command is stopped in ${deadlineS} s unless the slice clears`, { slice: feed.slice, cause: ep.cause, rule: choice.culprit.rule, growthBytes: choice.culprit.growthBytes, currentBytes: choice.culprit.currentBytes, fairShareBytes: choice.culprit.fairShareBytes, deadlineS });
    }
  }

  private raiseSlice(feed: SliceFeed, sample: SliceSample, toBytes: number, limitedBy: string): void {
    const figures = { slice: feed.slice, fromBytes: sample.highBytes, toBytes, limitedBy };
    const message = `the slice's brake ${formatSize(sample.highBytes)} -> ${formatSize(toBytes)} (${limitedBy})`;
    if (this.deps.config.observeOnly) return this.tell(feed.slice, feed.slice, 'slice-brake-raised', message, figures);
    this.deps.manager
      .setMemory(feed.slice, { memoryHigh: toBytes })
      .then(() => {
        this.tell(feed.slice, feed.slice, 'slice-brake-raised', message, figures); // once in force
        feed.setState(resetSliceEpisode(feed.state));
      })
      .catch((err: unknown) => this.deps.log('warn', 'could not raise the slice brake', { slice: feed.slice, err }));
  }

  private act(feed: SliceFeed, v: SliceVerdict, sample: SliceSample): void {
    const ep = v.episode;
    if (!ep || this.acting.has(feed.slice)) return;
    const choice = this.judge(feed, sample);
    const target = choice?.culprit ? this.deps.sessionAt(path.join(feed.dir, choice.culprit.path)) : undefined;
    if (!choice?.culprit || !target) {
      if (!this.toldNothing.has(feed.slice)) {
        const why = !choice?.culprit ? (choice?.why ?? 'no culprit') : `${choice.culprit.path} is judged the culprit, but it is not a session sbd watches`;
        this.tell(feed.slice, feed.slice, 'nothing-to-stop', `${feed.slice} stands still (${ep.cause}), but nothing may be stopped: ${why}`, { cause: ep.cause, members: choice?.members });
      }
      this.toldNothing.add(feed.slice);
      return;
    }
    if (v.event === 'critical') {
      this.tell(feed.slice, feed.slice, 'machine-short', `MemAvailable ${formatSize(sample.memAvailableBytes)} of ${formatSize(sample.memTotalBytes)}: the kernel's OOM killer is near; stopping ${target.session.id}'s biggest command now (${choice.why})`, { cause: ep.cause, memAvailableBytes: sample.memAvailableBytes, culprit: choice.culprit.path, rule: choice.culprit.rule, members: choice.members });
    }
    const why = { slice: feed.slice, cause: ep.cause, critical: ep.critical, rule: choice.culprit.rule, why: choice.why, growthBytes: choice.culprit.growthBytes, fairShareBytes: choice.culprit.fairShareBytes };
    const termToKillS = ep.critical ? this.deps.config.arbitration.criticalTermToKillS : this.deps.config.stop.termToKillS;
    this.acting.add(feed.slice);
    this.deps.brakes
      .stopBiggest(target.session, target.feed, why, termToKillS)
      .catch((err: unknown) => this.deps.log('warn', "stopping the culprit's biggest command failed", { slice: feed.slice, unit: target.session.unit, err }))
      .finally(() => {
        this.acting.delete(feed.slice);
        feed.setState(resetSliceEpisode(feed.state)); // a new episode: the next culprit is judged afresh
      });
  }
}
