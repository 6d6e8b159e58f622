// @ts-check
'use strict';
// The table bench:storm prints (bench/storm.js), apart so that its statistics are unit-tested.
const { spread, secs } = require('./lib');

/** The markdown table of a storm run (rows: run, unit, onset ms, verdict ms). */
function stormTable(rows, sbd, n) {
  const of = (run) => rows.filter((x) => x[0] === run);
  const lags = (xs) => xs.filter((x) => x[2] && x[3]).map((x) => (Number(x[3]) - Number(x[2])) / 1000);
  const single = spread(lags(of('single')));
  const st = of('storm');
  const sp = spread(lags(st));
  const onsets = st.filter((x) => x[2]).map((x) => Number(x[2]));
  const ratio = sp && single ? `${(sp.max / single.median).toFixed(2)}×` : '-';
  return [
    '| run | sessions | reached the brake | onsets spread over | verdicts | onset to verdict: median (min–max) | worst | worst / single median | sbd RSS after | sbd CPU from release to last verdict |',
    '| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |',
    `| one at a time | ${of('single').length} | ${of('single').filter((x) => x[2]).length} | – | ${lags(of('single')).length} | ${secs(single)} | ${single ? single.max.toFixed(1) : '-'} s | – | – | – |`,
    `| storm | ${n} | ${onsets.length} | ${onsets.length ? ((Math.max(...onsets) - Math.min(...onsets)) / 1000).toFixed(1) : '-'} s | ${lags(st).length} | ${secs(sp)} | ${sp ? sp.max.toFixed(1) : '-'} s | ${ratio} | ${(Number(sbd.sbd_rss_kib) / 1024).toFixed(0)} MiB | ${sbd.sbd_cpu_s_during_storm} s |`,
  ].join('\n');
}

module.exports = { stormTable };
