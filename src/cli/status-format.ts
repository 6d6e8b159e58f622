/** `sbctl status` for people: a header line about sbd, then one row per session (pure). */
import type { SessionRow, SliceRow, StatusReport } from '../sessions/status';
import { formatDuration } from '../util/duration';
import { formatSize } from '../util/size';


export function formatHeader(r: StatusReport): string {
  const s = r.service;
  if (!s.running) return `sbd: not running — sessions read straight from systemd and the cgroup files (slices: ${s.slices.join(', ')})`;
  const mode = s.observeOnly ? 'observe-only' : 'acting';
  const adopting = !s.adopting ? '' : s.adopting.listed === null ? '; adopting: listing the units, the sessions are not watched yet' : `; adopting: ${s.adopting.adopted} of ${s.adopting.listed} units read, the sessions not yet read are not watched`;
  return `sbd: running (pid ${s.pid ?? '?'}, up ${formatDuration(s.uptimeS ?? 0)}, v${s.version}, feed ${s.feed}, ${mode}; slices: ${s.slices.join(', ')})${adopting}`;
}

/**
 * From this age on, the figures' age is said under the table: one detector window (2 s); a
 * reading younger than that is as fresh as what the detector itself judges.
 */
export const FIGURES_AGE_SHOWN_FROM_S = 2;

/** "figures read up to 12s ago …" when sbd answered from an older reading, else undefined (pure). */
export function figuresAge(rows: readonly SessionRow[]): string | undefined {
  let oldest = 0;
  for (const r of rows) if (r.sampleAgeS !== null && r.sampleAgeS !== undefined) oldest = Math.max(oldest, r.sampleAgeS);
  if (oldest < FIGURES_AGE_SHOWN_FROM_S) return undefined;
  return `memory, pressure and processes as read up to ${formatDuration(oldest)} ago (sbd reads them again after each status); states and deadlines are of now`;
}

const COLUMNS = ['SESSION', 'STATE', 'MEMORY', 'BRAKE', 'CEILING', 'PRESSURE', 'ANON', 'PROCS', 'BIGGEST', 'HEARTBEAT'] as const;

function cells(row: SessionRow): string[] {
  const state = row.deadlineS !== null ? `${row.state} (${formatDuration(row.deadlineS)} left)` : row.state;
  return [
    row.name,
    state,
    formatSize(row.currentBytes),
    formatSize(row.highBytes),
    formatSize(row.maxBytes),
    row.pressureFullAvg10 === null ? '-' : row.pressureFullAvg10.toFixed(2),
    row.anonShare.toFixed(2),
    String(row.processes),
    row.biggest ? `${row.biggest.name} ${formatSize(row.biggest.rssBytes)}` : '-',
    row.heartbeatAgeS === null ? '-' : `${formatDuration(row.heartbeatAgeS)} ago`,
  ];
}

/** One slice: its state and figures, each member's, the culprit and why (design.md §11). */
export function formatSlice(s: SliceRow): string[] {
  const state = s.deadlineS !== null ? `${s.state} (${s.cause ?? '?'}; ${formatDuration(s.deadlineS)} left)` : s.state;
  const lines = [`slice ${s.slice}: ${state}; memory ${formatSize(s.currentBytes)}, brake ${formatSize(s.highBytes)}, ceiling ${formatSize(s.maxBytes)}; machine: ${formatSize(s.memAvailableBytes)} available`];
  for (const m of s.members) {
    const growth = m.growthBytes === 0 ? '' : `, ${m.growthBytes > 0 ? '+' : '-'}${formatSize(Math.abs(m.growthBytes))} since the episode began`;
    lines.push(`  ${m.path}: ${formatSize(m.currentBytes)} (fair share ${formatSize(m.fairShareBytes)}${growth})`);
  }
  if (s.feed !== undefined && s.feed !== 'psi') lines.push(`  feed: ${s.feed}`);
  if (s.culprit) lines.push(`  culprit: ${s.culprit.path} (${s.culprit.rule}): ${s.culprit.why}`);
  if (s.lastAction) lines.push(`  last action: ${s.lastAction}`);
  return lines;
}

export function formatStatus(r: StatusReport): string {
  const lines = [formatHeader(r)];
  for (const s of r.slices ?? []) lines.push(...formatSlice(s));
  if (r.sessions.length === 0) return `${lines.join('\n')}\nno sessions`;
  const table = [[...COLUMNS], ...r.sessions.map(cells)];
  const widths = COLUMNS.map((_, i) => Math.max(...table.map((row) => (row[i] ?? '').length)));
  for (const row of table) lines.push(row.map((c, i) => (i === row.length - 1 ? c : c.padEnd(widths[i] ?? 0))).join('  '));
  // Only what is not the norm: a session watched without PSI triggers (design.md §4's fallback).
  for (const s of r.sessions) if (s.feed !== null && s.feed !== undefined && s.feed !== 'psi') lines.push(`${s.name}: feed: ${s.feed}`);
  const age = figuresAge(r.sessions);
  if (age !== undefined) lines.push(age);
  const last = r.sessions.filter((s) => s.lastAction !== null).map((s) => `${s.name}: ${s.lastAction}`);
  if (last.length > 0) lines.push('', 'last actions:', ...last.map((l) => `  ${l}`));
  return lines.join('\n');
}
