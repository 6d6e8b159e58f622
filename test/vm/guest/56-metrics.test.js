// @ts-check
'use strict';
// Issue 14: sbd's metrics through Debian's real node_exporter (textfile collector, set up by
// 56-metrics.root.sh). A session wedges against its brake: sbd raises it one step to the ceiling,
// it wedges again, and after the grace sbd stops its biggest command; scraping node_exporter shows
// the raise and the stop counters moved, each series with the user label, and promtool finds the
// file sbd wrote clean.
const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const path = require('node:path');
const { spawnSync } = require('node:child_process');
const { labOnly, waitFor } = require('./helpers');
const { startSbd, incidentCollector, startAgent, stopSessions } = require('./sbd-helpers');

const DIR = '/var/lib/prometheus/node-exporter';
const FILE = path.join(DIR, 'sessionbrake-tester.prom'); // the default name: one per user
const NODE_EXPORTER = 'http://127.0.0.1:9100/metrics';
const MiB = 2 ** 20;

/** One scrape of node_exporter: series line -> value. */
async function scrape() {
  const res = await fetch(NODE_EXPORTER);
  assert.equal(res.status, 200);
  const series = new Map();
  for (const line of (await res.text()).split('\n')) {
    if (!line || line.startsWith('#')) continue;
    const at = line.lastIndexOf(' ');
    series.set(line.slice(0, at), Number(line.slice(at + 1)));
  }
  return series;
}

test('after a wedge, node_exporter serves the raise and the stop; promtool finds the textfile clean', labOnly, async (t) => {
  const t0 = Date.now();
  const phase = (what) => t.diagnostic(`${((Date.now() - t0) / 1000).toFixed(1)} s: ${what}`);
  // a 64M brake, one 64M step up to a 128M ceiling, then the grace (5 s) and the stop
  await startSbd({ detector: { graceS: 5 }, raise: { step: '64M', ceiling: '128M', reserve: '256M' }, stop: { termToKillS: 3 }, metrics: { textfileDirectory: DIR } });
  const inc = await incidentCollector();
  t.after(() => { inc.close(); stopSessions('metrics1'); });
  phase('sbd started');
  const raised = 'sessionbrake_brake_raises_total{scope="session",user="tester"}';
  const stopped = 'sessionbrake_stops_total{reason="own-brake",user="tester"}';
  const before = await waitFor(async () => {
    const s = await scrape();
    return s.has(raised) ? s : undefined;
  }, 30_000, { intervalMs: 250, what: "node_exporter to serve sbd's textfile" });
  phase(`before: raises ${before.get(raised)}, stops ${before.get(stopped)}`);
  assert.equal(fs.statSync(FILE).mode & 0o777, 0o644, 'readable by node_exporter (another user) under sbd\'s UMask=0077');
  assert.equal(before.get(`node_textfile_scrape_error`), 0, 'node_exporter read it');

  await startAgent('metrics1', 400, 200);
  const up = await inc.wait('metrics1', 'brake-raised', 60_000);
  assert.equal(up.toBytes, 128 * MiB);
  phase('brake raised');
  const stop = await inc.wait('metrics1', 'subtree-stopped', 90_000);
  assert.equal(stop.name, 'python3');
  phase('biggest command stopped');

  // written within a second of the change: the next scrapes show it
  const after = await waitFor(async () => {
    const s = await scrape();
    return (s.get(stopped) ?? 0) > (before.get(stopped) ?? 0) ? s : undefined;
  }, 15_000, { intervalMs: 250, what: 'the stop counter to move in node_exporter' });
  phase(`after: raises ${after.get(raised)}, stops ${after.get(stopped)}`);
  assert.equal(after.get(raised), (before.get(raised) ?? 0) + 1, 'one raise');
  assert.equal(after.get(stopped), (before.get(stopped) ?? 0) + 1, 'one stop');
  assert.ok((after.get('sessionbrake_stall_episodes_total{scope="session",user="tester"}') ?? 0) >= 2, 'two episodes: before the raise and after');
  assert.ok((after.get('sessionbrake_onset_to_verdict_seconds_count{user="tester"}') ?? 0) >= 2, 'each verdict timed from its onset');
  const ours = [...after.keys()].filter((k) => k.startsWith('sessionbrake_'));
  assert.ok(ours.length > 40, `${ours.length} sessionbrake series`);
  for (const k of ours) assert.match(k, /[{,]user="tester"[,}]/, `the user label on ${k}`);
  assert.ok(after.has(`node_textfile_mtime_seconds{file="${FILE}"}`) || after.has('node_textfile_mtime_seconds{file="sessionbrake-tester.prom"}'), "the file's age for the staleness alert");

  const lint = spawnSync('/usr/bin/promtool', ['check', 'metrics'], { input: fs.readFileSync(FILE), encoding: 'utf8', timeout: 60_000 });
  assert.equal(lint.status, 0, `promtool check metrics: ${lint.stdout}${lint.stderr}`);
  assert.equal(`${lint.stdout}${lint.stderr}`.trim(), '', 'no lint problem');
  phase('promtool clean');
});
