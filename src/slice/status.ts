/** A slice's row of `sbctl status`: its figures now, its members, and the culprit while it stands still. */
import type { SliceRow } from '../sessions/status';
import { chooseCulprit } from './culprit';
import { type SliceSample, type SliceState, limitFor } from './detector';

const STATE_NAMES: Record<string, string> = { clear: 'ok', warm: 'warm', hot: 'hot', 'standing-still': 'standing-still' };

/** The row (pure): `sample` is read now; `state` is the slice feed's. */
export function sliceRow(slice: string, sample: SliceSample, state: SliceState, verdictState: string | undefined, minGrowthBytes: number, nowMs: number, lastAction: string | null): SliceRow {
  const ep = state.episode;
  const cause = ep?.cause ?? (sample.highBytes !== Infinity ? 'slice-brake' : sample.maxBytes !== Infinity ? 'slice-ceiling' : 'machine');
  const limit = limitFor(cause, sample);
  const start = ep?.membersAtStart ?? Object.fromEntries(sample.members.map((m) => [m.path, m.currentBytes]));
  const choice = chooseCulprit(sample.members, start, limit, minGrowthBytes);
  return {
    slice,
    state: STATE_NAMES[verdictState ?? 'clear'] ?? 'ok',
    cause: ep ? ep.cause : null,
    currentBytes: sample.currentBytes,
    highBytes: sample.highBytes,
    maxBytes: sample.maxBytes,
    memAvailableBytes: sample.memAvailableBytes,
    members: choice.members,
    culprit: ep && choice.culprit ? { path: choice.culprit.path, rule: choice.culprit.rule, why: choice.why } : null,
    deadlineS: ep ? Math.max(0, (ep.endsAtMs - nowMs) / 1000) : null,
    lastAction,
  };
}
