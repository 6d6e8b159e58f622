#!/usr/bin/env node
// @ts-check
'use strict';
// The idle wakeups sbd's metrics add (issue 14; issue 15 wants sbd's wakeups flat): a node
// process with the metrics as sbd starts them (textfile + HTTP on loopback), and one without,
// each under strace for SECONDS (default 150) after a 10 s settle; a wakeup is a return of the
// main thread's epoll_pwait that waited (timeout > 0). Needs strace; runs on the host.
//   node bench/metrics-idle.js [SECONDS]
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { spawnSync } = require('node:child_process');

const seconds = Number(process.argv[2] ?? 150);
const SETTLE_S = 10;
const root = path.resolve(__dirname, '..');

/** The child: idles, with or without the metrics, then prints when its window began. */
const child = (withMetrics) => `
  const fs = require('node:fs'), os = require('node:os'), path = require('node:path');
  const keep = setTimeout(() => {}, 3600e3);
  let m;
  if (${withMetrics}) {
    const { startMetrics } = require(${JSON.stringify(path.join(root, 'dist/metrics/start.js'))});
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sb-idle-'));
    m = startMetrics({ config: { textfileDirectory: dir, httpListen: { host: '127.0.0.1', port: 0 }, perSession: true }, version: '1', graceS: 180, slices: ['sessions.slice'], view: () => ({ sessions: [], monitors: [] }), log: { info() {}, warn: console.error, error: console.error, debug() {} }, user: 'idle' });
  }
  setTimeout(() => { console.log('window', Date.now() / 1000); setTimeout(() => { m?.close(); clearTimeout(keep); }, ${seconds} * 1000); }, ${SETTLE_S} * 1000);`;

function measure(withMetrics) {
  const out = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'sb-strace-')), 'trace');
  const r = spawnSync('strace', ['-f', '-ttt', '-e', 'trace=execve,epoll_wait,epoll_pwait,rename', '-o', out, process.execPath, '-e', child(withMetrics)], { encoding: 'utf8' });
  if (r.error) throw new Error(`strace: ${r.error.message} (apt-get install strace)`);
  const start = Number(/window (\S+)/.exec(r.stdout)?.[1]);
  const lines = fs.readFileSync(out, 'utf8').split('\n');
  const main = lines.find((l) => / execve\(/.test(l))?.split(/\s+/)[0]; // the traced process's own pid (its main thread)
  const inWindow = lines.filter((l) => l.startsWith(`${main} `) && Number(l.split(/\s+/)[1]) >= start && Number(l.split(/\s+/)[1]) < start + seconds);
  const waited = inWindow.filter((l) => /epoll_p?wait\(\d+, .*, \d+, ([1-9]\d*)(, NULL, \d+)?\)/.test(l) && !/epoll_p?wait\(\d+, .*, \d+, 0[,)]/.test(l));
  return { wakeups: waited.length, writes: inWindow.filter((l) => / rename\(/.test(l)).length };
}

const without = measure(false);
const withM = measure(true);
const perMin = (n) => ((n * 60) / seconds).toFixed(1);
console.log(`| process (${seconds} s idle, main thread; each count includes the one timer that ends the window) | wakeups | per minute | textfile writes |`);
console.log('| --- | --- | --- | --- |');
console.log(`| node, nothing armed | ${without.wakeups} | ${perMin(without.wakeups)} | - |`);
console.log(`| node + sbd's metrics (textfile, HTTP) | ${withM.wakeups} | ${perMin(withM.wakeups)} | ${withM.writes} |`);
