#!/usr/bin/env node
// @ts-check
'use strict';
// `npm run bench:idle`: boots the lab guest and measures the idle cost of SIZES sessions (default
// "10 100 500"; issue 15 adds 1000 and 2000): sbd on the event feed, and up to VARIANTS_UPTO
// sessions (default 500) sbd on 5 s timer sampling and systemd-oomd watching the same slice
// (bench/guest/idle.sh; OTHERS_UPTO sets the size up to which those two run apart). BASE=DIR (a directory of the checkout holding another build's dist/ and
// build/, e.g. main's) adds that sbd as the baseline of the same run. SIZES="10 100",
// SECONDS_EACH=30 and SETTLE_S=10 shorten it; SB_VM_MEM (MiB) sizes the guest. FEED_VARIANTS="NAME=CONFIG;…"
// adds the same sbd with other configs, as feed-NAME rows (which part of sbd an idle cost comes from).
const fs = require('node:fs');
const { runGuestBench } = require('./guest-run');

/** @typedef {Record<string, string>} Row  one line of idle.tsv, by column name */

/** Wakeups a minute (voluntary + involuntary context switches) of a row (pure). */
const perMin = (/** @type {Row} */ x) => ((Number(x.voluntary_ctxt) + Number(x.involuntary_ctxt)) * 60) / Number(x.seconds);
/** "8 (5+3)": wakeups a minute, voluntary + involuntary (pure). */
const wake = (/** @type {Row | undefined} */ x) =>
  x === undefined || x.seconds === '-' ? '-' : `${perMin(x).toFixed(0)} (${((Number(x.voluntary_ctxt) * 60) / Number(x.seconds)).toFixed(0)}+${((Number(x.involuntary_ctxt) * 60) / Number(x.seconds)).toFixed(0)})`;
/** CPU seconds a minute (pure). */
const cpu = (/** @type {Row | undefined} */ x) => (x === undefined || x.seconds === '-' ? '-' : ((Number(x.cpu_s) * 60) / Number(x.seconds)).toFixed(2));
/** ms as "1.2 s"; "-" and "failed-after-MS" said as such (pure). */
const secs = (/** @type {string | undefined} */ ms) =>
  ms === undefined || ms === '-' ? '-' : ms.startsWith('failed-after-') ? `failed (${(Number(ms.slice(13)) / 1000).toFixed(1)} s)` : `${(Number(ms) / 1000).toFixed(1)} s`;

/** The rows of idle.tsv as objects keyed by its header (pure). */
function parseTsv(/** @type {string} */ text) {
  const [head, ...lines] = text.trim().split('\n');
  const cols = head.split('\t');
  return lines.map((l) => Object.fromEntries(l.split('\t').map((v, i) => [cols[i], v])));
}

/** The Markdown table of issue 15: one row per size (pure). */
function table(/** @type {Row[]} */ rows) {
  const out = [
    '| sessions | sbd feed: wakeups/min (vol+invol) | CPU s/min | RSS | open files (soft limit) | inotify watches (instances) | start: READY=1 | start: all adopted | stop | baseline sbd: start | baseline: wakeups/min | CPU s/min | RSS | 5 s sampling: wakeups/min | systemd-oomd: wakeups/min | `sbctl status --json` (`node -e 0`) |',
    '| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |',
  ];
  for (const n of [...new Set(rows.map((x) => x.sessions))]) {
    const of = (/** @type {string} */ v) => rows.find((x) => x.sessions === n && x.variant === v);
    const f = of('feed');
    if (!f) continue;
    const base = of('base-feed') ?? of('base-start');
    const rss = (/** @type {Row | undefined} */ x) => (x === undefined || x.rss_kib === '-' ? '-' : `${(Number(x.rss_kib) / 1024).toFixed(0)} MiB`);
    const status = f.status_ms === '-' ? '-' : `${f.status_ms.split('/').map((ms) => (Number(ms) / 1000).toFixed(1)).join(' s (')} s)`;
    out.push(`| ${n} | ${wake(f)} | ${cpu(f)} | ${rss(f)} | ${f.fds} (${f.nofile_soft}) | ${f.inotify_watches} (${f.inotify_instances}) | ${secs(f.start_ms)} | ${secs(f.adopted_ms)} | ${secs(of('feed-stop')?.stop_ms)} | ${secs(base?.start_ms)} | ${wake(of('base-feed'))} | ${cpu(of('base-feed'))} | ${rss(of('base-feed'))} | ${wake(of('sampling-5s'))} | ${wake(of('oomd'))} | ${status} |`);
  }
  return out.join('\n');
}

/** The rows of FEED_VARIANTS (variant feed-NAME), beside the plain feed of the same size (pure). */
function variantsTable(/** @type {Row[]} */ rows) {
  const named = rows.filter((x) => x.variant.startsWith('feed-') && x.variant !== 'feed-stop');
  if (named.length === 0) return '';
  const out = ['| sessions | variant | wakeups/min (vol+invol) | CPU s/min | RSS |', '| --- | --- | --- | --- | --- |'];
  for (const n of [...new Set(named.map((x) => x.sessions))]) {
    for (const x of rows.filter((r) => r.sessions === n && (r.variant === 'feed' || named.includes(r)))) {
      out.push(`| ${n} | ${x.variant} | ${wake(x)} | ${cpu(x)} | ${x.rss_kib === '-' ? '-' : `${(Number(x.rss_kib) / 1024).toFixed(0)} MiB`} |`);
    }
  }
  return out.join('\n');
}

if (require.main === module) {
  const env = `export SIZES="${process.env.SIZES ?? '10 100 500'}" SECONDS_EACH=${process.env.SECONDS_EACH ?? 60} SETTLE_S=${process.env.SETTLE_S ?? 100} VARIANTS_UPTO=${process.env.VARIANTS_UPTO ?? 500} OTHERS_UPTO=${process.env.OTHERS_UPTO ?? process.env.VARIANTS_UPTO ?? 500} BASE="${process.env.BASE ?? ''}" FEED_VARIANTS=${JSON.stringify(process.env.FEED_VARIANTS ?? '')}`;
  const tsv = runGuestBench('idle', `${env}\nbash /mnt/proj/bench/guest/idle.sh\n`, 3 * 3600);
  console.log(`\nresults: ${tsv}`);
  const rows = parseTsv(fs.readFileSync(tsv, 'utf8'));
  const limits = rows.find((x) => x.max_user_watches && x.max_user_watches !== '-');
  if (limits) console.log(`inotify: max_user_watches ${limits.max_user_watches}, max_user_instances ${limits.max_user_instances}`);
  console.log(table(rows));
  const variants = variantsTable(rows);
  if (variants) console.log(`\n${variants}`);
}

module.exports = { parseTsv, table, variantsTable, perMin, wake, cpu, secs };
