// @ts-check
'use strict';
// Issue 14: the shipped alert rules and dashboard (ops/) query only what sbd really exports: every
// sessionbrake_ name they use is a series of a rendered exposition of sbd's registry, and every
// label they group or match by is a label that series carries. node_exporter's own series
// (node_textfile_*) and Prometheus's `up` are the only others. promtool parses them: guest 59.
const test = require('node:test');
const assert = require('node:assert/strict');
const { SbdMetrics, seriesNames } = require('../../../dist/metrics/registry.js');
const { dashboardQueries, ruleExprs, metricNames } = require('../../support/ops-exprs');

/** Not sbd's: node_exporter's textfile collector and Prometheus's scrape health. */
const FOREIGN = new Map([
  ['node_textfile_mtime_seconds', ['file', 'instance', 'job']],
  ['node_textfile_scrape_error', ['instance', 'job']],
  ['up', ['instance', 'job']],
]);
/** Labels the scrape adds to every series. */
const SCRAPE_LABELS = ['instance', 'job'];

/** series name -> its label names, from a rendered exposition (every label combination starts at 0). */
async function exported() {
  const m = new SbdMetrics({ user: 'alice', version: '9.9.9', graceS: 180, slices: ['sessions.slice'], perSession: true, view: () => ({ sessions: [{ name: 'a', slice: 'sessions.slice', state: 'ok', feed: 'psi', standingStillS: undefined, memoryHighBytes: 1, currentBytes: 1 }], monitors: [] }) });
  const text = await m.render();
  /** @type {Map<string, Set<string>>} */
  const labels = new Map();
  for (const line of text.split('\n').filter((l) => l && !l.startsWith('#'))) {
    const name = line.split(/[{ ]/)[0];
    const set = labels.get(name) ?? new Set(SCRAPE_LABELS);
    for (const [, k] of (line.match(/\{(.*)\}/)?.[1] ?? '').matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="/g)) set.add(k);
    labels.set(name, set);
  }
  return labels;
}

/** Labels an expression groups or matches by, per metric where it can tell (by/without clauses apply to all). */
function labelsUsed(expr) {
  const used = new Set();
  for (const m of expr.matchAll(/\b(?:by|without)\s*\(([^)]*)\)/g)) for (const l of m[1].split(',').map((x) => x.trim()).filter(Boolean)) used.add(l);
  for (const m of expr.matchAll(/\{([^}]*)\}/g)) for (const [, k] of m[1].matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)\s*(?:=~|!~|!=|=)/g)) used.add(k);
  return [...used];
}

test('the rules and the dashboard use only series sbd exports (or node_exporter\'s and up), with their labels', async () => {
  const ours = await exported();
  assert.deepEqual([...ours.keys()].sort(), seriesNames({ perSession: true }), 'the rendered exposition is the registry\'s series');
  const queries = [...dashboardQueries().map((q) => ({ where: q.where, expr: q.expr })), ...ruleExprs().map((expr, i) => ({ where: `rule ${i + 1}`, expr }))];
  assert.ok(queries.length >= 20, `found the queries (${queries.length})`);
  const usedNames = new Set();
  for (const q of queries) {
    const names = metricNames(q.expr);
    assert.ok(names.length > 0, `${q.where}: selects a metric`);
    for (const n of names) {
      usedNames.add(n);
      const labels = ours.get(n) ?? (FOREIGN.has(n) ? new Set(FOREIGN.get(n)) : undefined);
      assert.ok(labels, `${q.where}: ${n} is not a series sbd exports (nor node_exporter's textfile one, nor up)`);
      for (const l of labelsUsed(q.expr).filter((x) => x !== 'le' && x !== '__name__')) {
        // a by/matcher label must be on at least one of the query's metrics
        assert.ok(names.some((x) => (ours.get(x) ?? new Set(FOREIGN.get(x))).has(l)), `${q.where}: label "${l}" is on none of ${names.join(', ')}`);
      }
    }
  }
  // the dashboard shows the list: sessions, stalls, verdicts, raises, lowerings, stops, reaps, freezes, OOM kills, notify failures, feed, onset->verdict, sbd itself
  for (const n of ['sessionbrake_sessions', 'sessionbrake_stall_episodes_total', 'sessionbrake_verdicts_total', 'sessionbrake_brake_raises_total', 'sessionbrake_brake_lowerings_total', 'sessionbrake_stops_total', 'sessionbrake_leftovers_reaped_total', 'sessionbrake_freeze_incidents_total', 'sessionbrake_oom_kills_total', 'sessionbrake_notify_command_failures_total', 'sessionbrake_feed_sessions', 'sessionbrake_onset_to_verdict_seconds_bucket', 'sessionbrake_process_resident_memory_bytes']) {
    assert.ok(usedNames.has(n), `the dashboard or rules show ${n}`);
  }
});

test('the check fails on a name sbd does not export and on a label its series lack', async () => {
  const ours = await exported();
  assert.equal(ours.has('sessionbrake_stops'), false, 'a misspelt name is not exported');
  assert.equal(ours.get('sessionbrake_stops_total')?.has('session'), false, 'stops are not labelled by session (bounded labels)');
  assert.deepEqual(labelsUsed('sum by (reason) (increase(sessionbrake_stops_total{user=~"$user"}[1h]))').sort(), ['reason', 'user']);
});
