/**
 * Who caused a slice's stall (design.md §11), a pure function of the members' figures: the member
 * that grew most since the episode began, or else the one holding most above its fair share of
 * the binding limit. A member that neither grew nor holds more than its share is never chosen.
 * A nested slice is one member; when it is chosen, the same rule picks within it.
 */

/** One cgroup under the slice: `path` is relative to the slice ("a.scope", "sub.slice/b.scope"). */
export interface MemberNow {
  path: string;
  currentBytes: number;
}

export type CulpritRule = 'grew-most' | 'above-fair-share';

export interface MemberRow {
  path: string;
  currentBytes: number;
  /** Growth since the episode began (a member born since then grew by all it holds). */
  growthBytes: number;
  fairShareBytes: number;
}

export interface Culprit extends MemberRow {
  rule: CulpritRule;
}

export interface CulpritChoice {
  culprit: Culprit | undefined;
  /** The members of the level that was judged last (the slice's, or a nested slice's). */
  members: MemberRow[];
  /** One line a person can read: the rule and the figures, or why nobody was chosen. */
  why: string;
}

const MiB = 2 ** 20;
const mib = (b: number): string => `${Math.round(b / MiB)} MiB`;

/** The members directly under `prefix` ("" for the slice itself). */
function level(members: readonly MemberNow[], prefix: string): MemberNow[] {
  const depth = prefix === '' ? 0 : prefix.split('/').length;
  return members.filter((m) => m.path.split('/').length === depth + 1 && (prefix === '' || m.path.startsWith(`${prefix}/`)));
}

function judge(rows: MemberRow[], minGrowthBytes: number): { culprit: Culprit | undefined; why: string } {
  let best: MemberRow | undefined;
  for (const r of rows) if (r.growthBytes >= minGrowthBytes && (best === undefined || r.growthBytes > best.growthBytes)) best = r;
  if (best) return { culprit: { ...best, rule: 'grew-most' }, why: `${best.path} grew most since the episode began: +${mib(best.growthBytes)} (now ${mib(best.currentBytes)}, fair share ${mib(best.fairShareBytes)})` };
  for (const r of rows) if (r.currentBytes > r.fairShareBytes && (best === undefined || r.currentBytes - r.fairShareBytes > best.currentBytes - best.fairShareBytes)) best = r;
  if (best) return { culprit: { ...best, rule: 'above-fair-share' }, why: `${best.path} holds most above its fair share: ${mib(best.currentBytes)} of a fair ${mib(best.fairShareBytes)} (none grew ${mib(minGrowthBytes)} or more)` };
  return { culprit: undefined, why: `no member grew ${mib(minGrowthBytes)} or more, none holds more than its fair share` };
}

/**
 * Choose the culprit among the slice's members. `startBytes` holds each member's memory.current
 * when the episode began; `limitBytes` is the limit that binds (the slice's brake or ceiling, or
 * what the machine leaves it), shared fairly between the members of a level.
 */
export function chooseCulprit(members: readonly MemberNow[], startBytes: Readonly<Record<string, number>>, limitBytes: number, minGrowthBytes: number): CulpritChoice {
  let prefix = '';
  let limit = limitBytes;
  const trail: string[] = [];
  for (;;) {
    const here = level(members, prefix);
    if (here.length === 0) return { culprit: undefined, members: [], why: prefix === '' ? 'the slice has no members' : `${prefix} has no members` };
    const fair = limit / here.length;
    const rows = here.map((m) => ({ path: m.path, currentBytes: m.currentBytes, growthBytes: m.currentBytes - (startBytes[m.path] ?? 0), fairShareBytes: fair }));
    const { culprit, why } = judge(rows, minGrowthBytes);
    // A nested slice is one member of its parent; within it, the same rule picks a unit.
    if (culprit && culprit.path.endsWith('.slice') && level(members, culprit.path).length > 0) {
      trail.push(why);
      prefix = culprit.path;
      limit = culprit.currentBytes;
      continue;
    }
    return { culprit, members: rows, why: [...trail, why].join('; within it, ') };
  }
}
