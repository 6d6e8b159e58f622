/**
 * What a detector's verdict adds to the metrics (pure): a stall episode begun, and a session's
 * onset-to-verdict time. Read from the verdicts, not the incidents: a slice's episode begun with
 * the machine already critical is told as `machine-short` only when a culprit can be stopped, and
 * the onset is the detector's own (stall/detector.ts), on the samples' monotonic clock.
 */
import type { SliceSample, SliceVerdict } from '../slice/detector';
import type { DetectorSample, Verdict } from '../stall/detector';

export const EPISODE_SCOPES = ['session', 'slice', 'machine'] as const;
export type EpisodeScope = (typeof EPISODE_SCOPES)[number];

/** A session's verdict: whether an episode began, and how long after its onset (s), when the detector knows the onset. */
export function sessionVerdictFigures(v: Verdict, sample: DetectorSample): { episode: boolean; onsetToVerdictS: number | undefined } {
  if (v.event !== 'standing-still') return { episode: false, onsetToVerdictS: undefined };
  return { episode: true, onsetToVerdictS: v.onsetMs === undefined ? undefined : Math.max(0, sample.atMs - v.onsetMs) / 1000 };
}

/**
 * A slice's verdict: the scope of the episode it began, or undefined. The machine binding (its
 * MemAvailable under the reserve) or nearly out of memory is the machine's episode; a critical
 * verdict on an episode already running escalates it and begins none (its start stays).
 */
export function sliceEpisodeScope(v: SliceVerdict, sample: SliceSample): EpisodeScope | undefined {
  const ep = v.episode;
  if (!ep) return undefined;
  if (v.event === 'standing-still') return ep.cause === 'machine' ? 'machine' : 'slice';
  if (v.event === 'critical' && ep.startedAtMs === sample.atMs) return 'machine';
  return undefined;
}
