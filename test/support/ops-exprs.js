// @ts-check
'use strict';
// The PromQL of the shipped dashboard and rules (ops/), for their checks: which metric names they
// use (against those sbd exports: test/unit/ops/ops-names.test.js) and the queries as a rules file
// that the real promtool parses (guest 59).
const fs = require('node:fs');
const path = require('node:path');

const OPS = path.resolve(__dirname, '../../ops');
const DASHBOARD = path.join(OPS, 'grafana/sessionbrake.json');
const RULES = path.join(OPS, 'prometheus/sessionbrake.rules.yml');

/** Every query of the dashboard: panel targets (PromQL) and variable queries (label_values). */
function dashboardQueries(dash = JSON.parse(fs.readFileSync(DASHBOARD, 'utf8'))) {
  /** @type {Array<{ where: string, expr: string, promql: boolean }>} */
  const out = [];
  const walk = (panels) => {
    for (const p of panels ?? []) {
      for (const t of p.targets ?? []) out.push({ where: `panel "${p.title}" ${t.refId}`, expr: t.expr, promql: true });
      walk(p.panels);
    }
  };
  walk(dash.panels);
  for (const v of dash.templating?.list ?? []) {
    const q = typeof v.query === 'string' ? v.query : v.query?.query;
    if (v.type === 'query' && q) out.push({ where: `variable $${v.name}`, expr: q, promql: false });
  }
  return out;
}

/** The rules file's `expr:` lines (each rule's expression is one line there). */
function ruleExprs(text = fs.readFileSync(RULES, 'utf8')) {
  return [...text.matchAll(/^\s+expr:\s*(.+)$/gm)].map((m) => m[1].trim());
}

/** Grafana's variables made concrete, so that the query is plain PromQL. */
function concrete(expr) {
  return expr.replace(/\$__rate_interval|\$__interval/g, '5m').replace(/\$\{?[a-z_]+\}?/g, '.*');
}

/** The metric names an expression selects (identifiers before a selector, a range or an end). */
function metricNames(expr) {
  const keywords = new Set(['sum', 'max', 'min', 'avg', 'by', 'without', 'rate', 'increase', 'time', 'histogram_quantile', 'label_values', 'on', 'ignoring', 'and', 'or', 'unless', 'count', 'topk', 'bottomk', 'le', 'offset']);
  const names = new Set();
  // drop label matchers and strings first: names inside {…} and "…" are labels and values
  const bare = concrete(expr).replace(/"(?:[^"\\]|\\.)*"/g, '""').replace(/\{[^}]*\}/g, '{}');
  for (const m of bare.matchAll(/\b([a-zA-Z_:][a-zA-Z0-9_:]*)\b(?!\s*\()/g)) {
    const n = m[1];
    if (keywords.has(n) || /^\d/.test(n) || /^(instance|user|state|scope|reason|kind|mode|verdict|file|job)$/.test(n)) continue;
    if (/^\d+[smhd]$/.test(n)) continue;
    names.add(n);
  }
  return [...names];
}

/** A rules file whose recording rules are the dashboard's queries, for `promtool check rules`. */
function dashboardAsRules(queries = dashboardQueries()) {
  const rules = queries.filter((q) => q.promql).map((q, i) => `      - record: sessionbrake:dashboard_query_${i}\n        expr: ${JSON.stringify(concrete(q.expr))}`);
  return `groups:\n  - name: sessionbrake-dashboard-queries\n    rules:\n${rules.join('\n')}\n`;
}

module.exports = { OPS, DASHBOARD, RULES, dashboardQueries, ruleExprs, concrete, metricNames, dashboardAsRules };
