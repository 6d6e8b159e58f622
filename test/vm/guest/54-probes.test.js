// @ts-check
'use strict';
// Issue 13, the probes that run inside sbd, against the real user manager and a real sbd: an
// http monitor against a local server (started here, in its own process, so that sbctl's
// synchronous calls never hold it) backs off between failed tries (the gaps grow) and is
// suspended after maxConsecutiveFailures with one notice; another that fails, then answers 200,
// tells the failure, the recovery and a notifyOn match of the body; the URL's query is never told
// nor logged.
// A file monitor sees a file appear and change. A process monitor tells the exit of a process
// started here, and its stop leaves another one running (sbd never signals what it observes).
const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { spawn, spawnSync } = require('node:child_process');
const { labOnly, waitFor } = require('./helpers');
const { startSbd, runSession, sbctl, systemctl, alive } = require('./sbd-helpers');

const json = (r) => {
  assert.equal(r.status, 0, `sbctl: ${r.stderr}`);
  return JSON.parse(r.stdout);
};
const inbox = (session) => {
  const r = sbctl('inbox', '--session', session, '--json');
  assert.equal(r.status, 0, r.stderr);
  return r.stdout.trim().split('\n').filter(Boolean).map((l) => JSON.parse(l));
};
const list = (session) => json(sbctl('monitor', 'list', '--session', session, '--json'));

// /fail answers 500 always; /flaky 500 the first time, then 200 with a body that says READY.
const SERVER = `
const http = require('node:http');
let flaky = 0;
const s = http.createServer((req, res) => {
  process.stdout.write(JSON.stringify({ path: req.url, atMs: performance.now() }) + '\\n');
  if (req.url.startsWith('/fail')) { res.writeHead(500); res.end('down\\n'); return; }
  if (req.url.startsWith('/flaky') && ++flaky === 1) { res.writeHead(500); res.end('starting\\n'); return; }
  if (req.url.startsWith('/flaky')) { res.writeHead(200, { 'content-type': 'text/plain' }); res.end('build 42\\nstatus: READY\\n'); return; }
  res.writeHead(404); res.end();
});
s.listen(0, '127.0.0.1', () => process.stdout.write(JSON.stringify({ port: s.address().port }) + '\\n'));
`;

function startServer() {
  const child = spawn(process.execPath, ['-e', SERVER], { stdio: ['ignore', 'pipe', 'inherit'] });
  /** @type {Array<{path?: string, atMs?: number, port?: number}>} */
  const seen = [];
  let buf = '';
  child.stdout?.on('data', (d) => {
    buf += d;
    for (let i = buf.indexOf('\n'); i >= 0; i = buf.indexOf('\n')) {
      seen.push(JSON.parse(buf.slice(0, i)));
      buf = buf.slice(i + 1);
    }
  });
  return { child, seen, hits: (/** @type {string} */ p) => seen.filter((e) => e.path?.startsWith(p)) };
}

test('probes: http backoff and suspension, a match in a 200 body, a file appearing and changing, a process exiting unsignalled', labOnly, async (t) => {
  await startSbd({});
  const session = runSession('probe1', ['--memory-high', '256M'], ['sleep', '900']);
  t.after(() => { systemctl('stop', 'probe1.scope'); session.child.kill(); });
  const server = startServer();
  t.after(() => server.child.kill());
  const { port } = await waitFor(() => server.seen.find((e) => e.port), 30_000, { what: 'the test server to listen' });
  await waitFor(() => json(sbctl('status', '--json')).sessions.some((s) => s.name === 'probe1'), 60_000, { what: 'sbd to watch probe1' });

  // two http monitors at once: one that keeps failing, one that fails once then answers READY
  const down = json(sbctl('monitor', 'http', '--session', 'probe1', '--label', 'down', '--interval', '5s', '--max-failures', '3', '--json', `http://127.0.0.1:${port}/fail?token=s3cret`));
  assert.equal(down.answer, 'created');
  const flaky = json(sbctl('monitor', 'http', '--session', 'probe1', '--label', 'flaky', '--interval', '5s', '--notify-on', 'READY', '--coalesce', '1s', '--json', `http://127.0.0.1:${port}/flaky`));
  assert.equal(flaky.answer, 'created');

  // a file monitor of a file that does not exist yet
  const file = path.join(os.homedir(), 'probe1-result.txt');
  fs.rmSync(file, { force: true });
  t.after(() => fs.rmSync(file, { force: true }));
  const watched = json(sbctl('monitor', 'file', '--session', 'probe1', '--label', 'result', '--coalesce', '1s', '--json', file));
  assert.equal(watched.answer, 'created');
  fs.writeFileSync(file, 'step 1 done\n');
  const appeared = await waitFor(() => inbox('probe1').find((n) => n.from === watched.handle && n.kind === 'appeared'), 30_000, { what: 'the file to be told appeared' });
  assert.equal(appeared.text, 'result: appeared (12 bytes)');
  assert.deepEqual(appeared.lines, ['step 1 done']);
  fs.appendFileSync(file, 'step 2 failed: ERROR\n');
  const changed = await waitFor(() => inbox('probe1').find((n) => n.from === watched.handle && n.kind === 'changed'), 30_000, { what: 'the file to be told changed' });
  assert.equal(changed.text, 'result: changed: 12 bytes → 33 bytes');
  assert.deepEqual(changed.lines, ['step 1 done', 'step 2 failed: ERROR']);

  // process monitors: by name (one process has it), by pid file; a name several have is refused
  const sleeperBin = path.join(os.homedir(), 'probe-sleeper');
  fs.rmSync(sleeperBin, { force: true });
  fs.symlinkSync('/bin/sleep', sleeperBin); // its comm is the name it was run by: probe-sleeper
  t.after(() => fs.rmSync(sleeperBin, { force: true }));
  const ending = spawn(sleeperBin, ['600'], { stdio: 'ignore' });
  const staying = spawn('sleep', ['601'], { stdio: 'ignore' });
  t.after(() => { ending.kill('SIGKILL'); staying.kill('SIGKILL'); });
  await waitFor(() => fs.readFileSync(`/proc/${ending.pid}/comm`, 'utf8').trim() === 'probe-sleeper', 10_000, { what: 'the sleeper to exec' });
  const byName = json(sbctl('monitor', 'process', '--session', 'probe1', '--match', 'probe-sleeper', '--json'));
  assert.equal(byName.answer, 'created');
  const pidFile = path.join(os.homedir(), 'probe1.pid');
  fs.writeFileSync(pidFile, `${staying.pid}\n`);
  t.after(() => fs.rmSync(pidFile, { force: true }));
  const byFile = json(sbctl('monitor', 'process', '--session', 'probe1', '--pid-file', pidFile, '--label', 'staying', '--json'));
  assert.equal(byFile.answer, 'created');
  const several = sbctl('monitor', 'process', '--session', 'probe1', '--match', 'sleep', '--json');
  assert.equal(several.status, 2, 'several processes named sleep: refused');
  assert.match(several.stderr, new RegExp(`"sleep" names \\d+ processes of yours \\(pids [\\d, ]*\\b${staying.pid}\\b`));
  ending.kill('SIGTERM'); // the test ends it; sbd only observes
  const exit = await waitFor(() => inbox('probe1').find((n) => n.from === byName.handle && n.kind === 'exit'), 30_000, { what: 'the exit to be told' });
  assert.equal(exit.text, `${byName.handle}: process ${ending.pid} (probe-sleeper) exited`);
  assert.deepEqual(json(sbctl('monitor', 'stop', '--session', 'probe1', '--json', 'staying')), { handle: 'staying', lifecycle: 'stopped' });
  assert.ok(staying.pid !== undefined && alive(staying.pid), 'the observed process is not signalled by the stop');

  // the http monitors: the flaky one tells its failure, recovery and the match
  const flakyNotices = await waitFor(() => {
    const mine = inbox('probe1').filter((n) => n.from === flaky.handle);
    return mine.some((n) => n.kind === 'match') && mine;
  }, 60_000, { what: 'the flaky endpoint\'s READY line in the inbox' });
  assert.deepEqual(flakyNotices.map((n) => n.kind), ['failing', 'recovered', 'match']);
  assert.match(flakyNotices[0].text, /^flaky: failing: status 500 \(expected 2xx or 3xx\)/);
  assert.equal(flakyNotices[1].text, 'flaky: recovered: status 200 after 1 failure');
  assert.deepEqual(flakyNotices[2].lines, ['status: READY']);

  // the failing one: three tries with growing gaps (2x then 4x the interval, ±20 %), then suspended
  const suspended = await waitFor(() => list('probe1').find((m) => m.id === down.id && m.lifecycle === 'suspended'), 90_000, { what: 'the failing monitor to be suspended' });
  assert.match(suspended.reason, /^suspended after 3 failures in a row; the last: status 500/);
  await waitFor(() => server.hits('/fail').length >= 3, 10_000, { what: 'the server\'s record of the third try' });
  const tries = server.hits('/fail').map((e) => /** @type {number} */ (e.atMs));
  assert.equal(tries.length, 3, 'three tries, then none');
  const [g1, g2] = [(tries[1] - tries[0]) / 1000, (tries[2] - tries[1]) / 1000];
  t.diagnostic(`gaps between failed tries: ${g1.toFixed(1)} s, ${g2.toFixed(1)} s`);
  assert.ok(g1 >= 7.5 && g1 <= 14, `first backoff ~10 s (2 x 5 s ±20 %): ${g1}`);
  assert.ok(g2 >= 15.5 && g2 <= 27, `second backoff ~20 s (4 x 5 s ±20 %): ${g2}`);
  assert.ok(g2 > g1, 'the gaps grow');
  const told = inbox('probe1').filter((n) => n.from === down.handle);
  assert.deepEqual(told.map((n) => n.kind), ['failing', 'suspended'], 'one failing notice, one suspension notice');
  assert.equal(told[1].text, `down: suspended after 3 failures in a row; the last: status 500 (expected 2xx or 3xx) (no more requests to http://127.0.0.1:${port}/fail)`);
  assert.ok(!JSON.stringify(inbox('probe1')).includes('s3cret'), 'the URL\'s query is never shown');
  const journal = () => spawnSync('journalctl', ['--user', '-u', 'sbd.service', '--no-pager', '-o', 'cat'], { encoding: 'utf8' }).stdout;
  const logged = await waitFor(() => journal().split('\n').find((l) => l.includes('an http monitor is suspended') && l.includes(down.id)), 30_000, { what: 'sbd to log the suspension' });
  assert.ok(logged.includes(`"url":"http://127.0.0.1:${port}/fail"`), `logged as scheme://host:port/path: ${logged}`);
  assert.ok(!journal().includes('s3cret'), 'the URL\'s query is never logged');
  await new Promise((r) => setTimeout(r, 6000));
  assert.equal(server.hits('/fail').length, 3, 'a suspended monitor asks nothing more');
});
