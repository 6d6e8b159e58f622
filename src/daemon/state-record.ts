/**
 * A session's entry in the state file has two writers: the controller (the running deadline, the
 * brake before a raise, a stop under way) and the freeze watch (the signals told and not yet
 * recovered). Each saves its own part; this keeps the other's, so that neither erases what the
 * other saved, and writes the entry through the StateWriter.
 */
import type { SavedFreeze } from '../freeze/policy';
import type { SavedSession, SavedState } from './state-file';

type Actions = Omit<SavedSession, 'freeze'>;

export class StateRecords {
  private readonly actions = new Map<string, Actions>();
  private readonly freeze = new Map<string, { invocationId: string; saved: SavedFreeze }>();

  constructor(
    /** The state as loaded: each entry's parts are kept until their owner saves them anew. */
    loaded: SavedState,
    /** `batched`: written by the caller's next flush, before it goes on (StateWriter.save). */
    private readonly write: (unit: string, s: SavedSession | undefined, options?: { batched: boolean }) => void,
    /** This boot's id, for an entry that holds the freeze watch's part alone. */
    private readonly bootId: () => string | undefined,
  ) {
    for (const [unit, { freeze, ...actions }] of Object.entries(loaded)) {
      this.actions.set(unit, actions);
      if (freeze) this.freeze.set(unit, { invocationId: actions.invocationId, saved: freeze });
    }
  }

  /** The controller's part (undefined: nothing of it to keep). A freeze part of another invocation of the unit is dropped. */
  saveActions(unit: string, s: SavedSession | undefined): void {
    if (s === undefined) this.actions.delete(unit);
    else {
      const { freeze: _ignored, ...actions } = s;
      this.actions.set(unit, actions);
      if (this.freeze.get(unit)?.invocationId !== s.invocationId) this.freeze.delete(unit);
    }
    this.flush(unit);
  }

  /**
   * The freeze watch's part of the session `invocationId` (undefined: nothing open), batched: the
   * watch flushes the file once for its round before it tells. A controller part of another
   * invocation of the unit is dropped.
   */
  saveFreeze(unit: string, invocationId: string, saved: SavedFreeze | undefined): void {
    if (saved === undefined) this.freeze.delete(unit);
    else this.freeze.set(unit, { invocationId, saved });
    const a = this.actions.get(unit);
    if (a !== undefined && a.invocationId !== invocationId) this.actions.delete(unit);
    this.flush(unit, true);
  }

  /** The session is over: its whole entry goes. */
  drop(unit: string): void {
    this.actions.delete(unit);
    this.freeze.delete(unit);
    this.write(unit, undefined);
  }

  private flush(unit: string, batched = false): void {
    const a = this.actions.get(unit);
    const f = this.freeze.get(unit);
    if (f === undefined) return this.write(unit, a !== undefined && hasActions(a) ? a : undefined, { batched });
    const boot = this.bootId();
    const base: Actions = a !== undefined && a.invocationId === f.invocationId ? a : { invocationId: f.invocationId, ...(boot !== undefined ? { bootId: boot } : {}) };
    this.write(unit, { ...base, freeze: f.saved }, { batched });
  }
}

/** Whether the controller's part holds anything beyond the session's identity. */
function hasActions(a: Actions): boolean {
  return a.deadline !== undefined || a.originalHigh !== undefined || a.stopping === true || a.stop !== undefined;
}
