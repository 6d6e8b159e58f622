/**
 * What a runner holds while a monitor runs (a timer, a request, a pidfd), kept per manager: one
 * map per kit, so that two managers (sbd's, a test's) never share a monitor's handles.
 */
import type { RunnerKit } from '../runner';

export function perKit<S>(): (kit: RunnerKit) => Map<string, S> {
  const maps = new WeakMap<RunnerKit, Map<string, S>>();
  return (kit) => {
    let m = maps.get(kit);
    if (!m) {
      m = new Map<string, S>();
      maps.set(kit, m);
    }
    return m;
  };
}
