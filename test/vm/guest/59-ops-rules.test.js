// @ts-check
'use strict';
// Issue 14: the alert rules and the dashboard that ship in ops/ are checked by the real promtool
// (Debian's prometheus package in the lab image): the rules parse, their unit tests pass, and
// every dashboard query is PromQL that Prometheus's own parser takes. Which metric names they use
// against those sbd exports: test/unit/ops/ops-names.test.js (host).
const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { spawnSync } = require('node:child_process');
const { labOnly } = require('./helpers');
const { OPS, RULES, dashboardAsRules, dashboardQueries } = require('../../support/ops-exprs');

const PROMTOOL = '/usr/bin/promtool';
const promtool = (...args) => spawnSync(PROMTOOL, args, { encoding: 'utf8', cwd: path.join(OPS, 'prometheus'), timeout: 120_000 });

test('promtool: the alert rules parse and their unit tests pass; the dashboard\'s queries parse', labOnly, (t) => {
  assert.ok(fs.existsSync(PROMTOOL), `${PROMTOOL} missing: the lab image installs Debian's prometheus package (test/vm/image/packages.txt)`);
  t.diagnostic(promtool('--version').stdout.split('\n')[0]);
  const check = promtool('check', 'rules', RULES);
  assert.equal(check.status, 0, check.stdout + check.stderr);
  assert.match(check.stdout, /SUCCESS: 6 rules found/);
  const unit = promtool('test', 'rules', 'sessionbrake.rules.test.yml');
  assert.equal(unit.status, 0, unit.stdout + unit.stderr);
  assert.match(unit.stdout, /SUCCESS/);

  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sb-dash-'));
  const file = path.join(dir, 'dashboard-queries.yml');
  fs.writeFileSync(file, dashboardAsRules());
  const dash = promtool('check', 'rules', file);
  assert.equal(dash.status, 0, dash.stdout + dash.stderr);
  const n = dashboardQueries().filter((q) => q.promql).length;
  assert.match(dash.stdout, new RegExp(`SUCCESS: ${n} rules found`));
  // the check can fail: a broken query is refused by the same parser
  fs.writeFileSync(file, dashboardAsRules([{ where: 'broken', expr: 'sum by (state (sessionbrake_sessions)', promql: true }]));
  assert.notEqual(promtool('check', 'rules', file).status, 0, 'promtool refuses a query that does not parse');
  fs.rmSync(dir, { recursive: true, force: true });
});
