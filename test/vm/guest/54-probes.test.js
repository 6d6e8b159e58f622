// @ts-check
'use strict';
// Issue 13, the probes that run inside sbd, against the real user manager and a real sbd: an
// http monitor against a local server (started here, in its own process, so that sbctl's
// synchronous calls never hold it) backs off between failed tries (the gaps grow) and is
// suspended after maxConsecutiveFailures with one notice; another that fails, then answers 200,
// tells the failure, the recovery and a notifyOn match of the body; the URL's query is never told
// nor logged. A file monitor sees a file appear and change. A process monitor tells the exit of a
// process started here, and its stop leaves another one running (sbd never signals what it
// observes). The waits read the session's inbox file (sbctl costs seconds in this emulated
// guest); what the agent sees is then checked once through `sbctl inbox --json`.
const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { spawn, spawnSync } = require('node:child_process');
const { labOnly, waitFor } = require('./helpers');
const { startSbd, runSession, sbctl, systemctl, alive } = require('./sbd-helpers');

const { readInbox, inboxDir } = require(path.resolve(__dirname, '../../../dist/inbox/store.js'));

const json = (r) => {
  assert.equal(r.status, 0, `sbctl: ${r.stderr}`);
  return JSON.parse(r.stdout);
};
/** The session's notices as sbd wrote them (cheap: for waiting). */
const notices = () => readInbox(inboxDir(process.env), 'probe1');
const noticeOf = (from, kind) => notices().find((n) => n.from === from && n.kind === kind);

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
  const began = performance.now();
  const mark = (what) => t.diagnostic(`${((performance.now() - began) / 1000).toFixed(1)} s: ${what}`);
  const server = startServer();
  t.after(() => server.child.kill());
  await startSbd({});
  const session = runSession('probe1', ['--memory-high', '256M'], ['sleep', '900']);
  t.after(() => { systemctl('stop', 'probe1.scope'); session.child.kill(); });
  const { port } = await waitFor(() => server.seen.find((e) => e.port), 30_000, { what: 'the test server to listen' });
  await waitFor(() => json(sbctl('status', '--json')).sessions.some((s) => s.name === 'probe1'), 60_000, { what: 'sbd to watch probe1' });
  mark('sbd watches probe1');

  // two http monitors at once: one that keeps failing, one that fails once then answers READY
  const down = json(sbctl('monitor', 'http', '--session', 'probe1', '--label', 'down', '--interval', '5s', '--max-failures', '3', '--json', `http://127.0.0.1:${port}/fail?token=s3cret`));
  assert.equal(down.answer, 'created');
  const flaky = json(sbctl('monitor', 'http', '--session', 'probe1', '--label', 'flaky', '--interval', '5s', '--notify-on', 'READY', '--coalesce', '1s', '--json', `http://127.0.0.1:${port}/flaky`));
  assert.equal(flaky.answer, 'created');
  mark('http monitors started');

  // a file monitor of a file that does not exist yet
  const file = path.join(os.homedir(), 'probe1-result.txt');
  fs.rmSync(file, { force: true });
  t.after(() => fs.rmSync(file, { force: true }));
  const watched = json(sbctl('monitor', 'file', '--session', 'probe1', '--label', 'result', '--coalesce', '1s', '--json', file));
  assert.equal(watched.answer, 'created');
  fs.writeFileSync(file, 'step 1 done\n');
  await waitFor(() => noticeOf(watched.handle, 'appeared'), 30_000, { what: 'the file to be told appeared' });
  fs.appendFileSync(file, 'step 2 failed: ERROR\n');
  await waitFor(() => noticeOf(watched.handle, 'changed'), 30_000, { what: 'the file to be told changed' });
  mark('file appeared and changed');

  // process monitors: by name (its comm, the name it was run by), by pid file
  const sleeperBin = path.join(os.homedir(), 'probe-sleeper');
  fs.rmSync(sleeperBin, { force: true });
  fs.symlinkSync('/bin/sleep', sleeperBin);
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
  ending.kill('SIGTERM'); // the test ends it; sbd only observes
  await waitFor(() => noticeOf(byName.handle, 'exit'), 30_000, { what: 'the exit to be told' });
  assert.deepEqual(json(sbctl('monitor', 'stop', '--session', 'probe1', '--json', 'staying')), { handle: 'staying', lifecycle: 'stopped' });
  assert.ok(staying.pid !== undefined && alive(staying.pid), 'the observed process is not signalled by the stop');
  mark('process exit told; the stopped one lives on');

  // the http monitors: the flaky one's match, the failing one's suspension
  await waitFor(() => noticeOf(flaky.handle, 'match'), 60_000, { what: 'the flaky endpoint\'s READY line' });
  await waitFor(() => noticeOf(down.handle, 'suspended'), 90_000, { what: 'the failing monitor to be suspended' });
  const sawSuspension = performance.now();
  mark('http match and suspension told');
  await waitFor(() => server.hits('/fail').length >= 3, 10_000, { what: 'the server\'s record of the third try' });
  const tries = server.hits('/fail').map((e) => /** @type {number} */ (e.atMs));
  assert.equal(tries.length, 3, 'three tries, then none');
  const [g1, g2] = [(tries[1] - tries[0]) / 1000, (tries[2] - tries[1]) / 1000];
  t.diagnostic(`gaps between failed tries: ${g1.toFixed(1)} s, ${g2.toFixed(1)} s`);
  assert.ok(g1 >= 7.5 && g1 <= 14, `first backoff ~10 s (2 x 5 s ±20 %): ${g1}`);
  assert.ok(g2 >= 15.5 && g2 <= 27, `second backoff ~20 s (4 x 5 s ±20 %): ${g2}`);
  assert.ok(g2 > g1, 'the gaps grow');
  const suspended = json(sbctl('monitor', 'list', '--session', 'probe1', '--json')).find((m) => m.id === down.id);
  assert.equal(suspended?.lifecycle, 'suspended');
  assert.match(suspended?.reason, /^suspended after 3 failures in a row; the last: status 500/);

  // what the agent reads: sbctl inbox --json
  const inbox = sbctl('inbox', '--session', 'probe1', '--json');
  assert.equal(inbox.status, 0, inbox.stderr);
  const told = inbox.stdout.trim().split('\n').filter(Boolean).map((l) => JSON.parse(l));
  const of = (h) => told.filter((n) => n.from === h).map((n) => [n.kind, n.text, n.lines]);
  assert.deepEqual(of(watched.handle), [
    ['appeared', 'result: appeared (12 bytes)', ['step 1 done']],
    ['changed', 'result: changed: 12 bytes → 33 bytes', ['step 1 done', 'step 2 failed: ERROR']],
  ]);
  assert.deepEqual(of(byName.handle), [['exit', `${byName.handle}: process ${ending.pid} (probe-sleeper) exited`, undefined]]);
  assert.deepEqual(of(byFile.handle), [], 'nothing told of the process whose monitor was stopped');
  assert.deepEqual(of(flaky.handle), [
    ['failing', 'flaky: failing: status 500 (expected 2xx or 3xx); tried again with backoff, suspended after 5 failures in a row', undefined],
    ['recovered', 'flaky: recovered: status 200 after 1 failure', undefined],
    ['match', 'flaky: 1 new line matched', ['status: READY']],
  ]);
  assert.deepEqual(of(down.handle), [
    ['failing', 'down: failing: status 500 (expected 2xx or 3xx); tried again with backoff, suspended after 3 failures in a row', undefined],
    ['suspended', `down: suspended after 3 failures in a row; the last: status 500 (expected 2xx or 3xx) (no more requests to http://127.0.0.1:${port}/fail)`, undefined],
  ], 'one failing notice, one suspension notice');
  assert.ok(!inbox.stdout.includes('s3cret'), 'the URL\'s query is never told');
  const journal = () => spawnSync('journalctl', ['--user', '-u', 'sbd.service', '--no-pager', '-o', 'cat'], { encoding: 'utf8' }).stdout;
  const logged = await waitFor(() => journal().split('\n').find((l) => l.includes('an http monitor is suspended') && l.includes(down.id)), 30_000, { what: 'sbd to log the suspension' });
  assert.ok(logged.includes(`"url":"http://127.0.0.1:${port}/fail"`), `logged as scheme://host:port/path: ${logged}`);
  assert.ok(!journal().includes('s3cret'), 'the URL\'s query is never logged');
  // nothing more is asked of a suspended monitor (unsuspended, its next try would come 32-48 s after the third)
  await new Promise((r) => setTimeout(r, Math.max(0, 6000 - (performance.now() - sawSuspension))));
  assert.equal(server.hits('/fail').length, 3, 'a suspended monitor asks nothing more');
  mark('done');
});
