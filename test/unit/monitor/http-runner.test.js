// @ts-check
'use strict';
// Issue 13: the http monitor inside sbd, against a real node:http server on 127.0.0.1: a failing
// endpoint's tries back off (2x, 4x the interval, jitter drawn) and it is suspended after
// maxConsecutiveFailures with one notice naming the last failure; failing and recovery are told
// once each; a notifyOn match of an ok body is told when it changes, not every tick; a timeout, a
// refused connection and a body over the cap; the URL's userinfo and query never shown. Timers
// are faked (each try fires when the test says), the requests are real.
const test = require('node:test');
const assert = require('node:assert/strict');
const http = require('node:http');
const { fakeHost, fakeTimers, until, sleepReal } = require('./fake-host');
const { shownUrl, statusOk, failureOf } = require('../../../dist/monitor/runners/http-get.js');
const { OUTPUT_CAP_BYTES } = require('../../../dist/monitor/spec.js');

/** A server whose answers come from `answer(n)` (n: the request's number, from 1); counts requests and the most in flight at once. */
async function server(t, answer) {
  const seen = { requests: 0, inFlight: 0, maxInFlight: 0, urls: /** @type {string[]} */ ([]) };
  const s = http.createServer((req, res) => {
    seen.requests += 1;
    seen.inFlight += 1;
    seen.maxInFlight = Math.max(seen.maxInFlight, seen.inFlight);
    seen.urls.push(req.url ?? '');
    res.on('close', () => { seen.inFlight -= 1; });
    answer(seen.requests, res);
  });
  await new Promise((r) => s.listen(0, '127.0.0.1', () => r(undefined)));
  t.after(() => { s.closeAllConnections(); s.close(); });
  const { port } = /** @type {import('node:net').AddressInfo} */ (s.address());
  return { seen, base: `http://127.0.0.1:${port}` };
}

const reply = (status, body = '') => (/** @type {number} */ _n, /** @type {http.ServerResponse} */ res) => { res.writeHead(status, { 'content-type': 'text/plain' }); res.end(body); };

test('a failing endpoint backs off 2x then 4x the interval and is suspended after maxConsecutiveFailures, told once', async (t) => {
  const srv = await server(t, reply(500, 'down\n'));
  const timers = fakeTimers(t);
  t.mock.method(Math, 'random', () => 0.5); // the jitter's middle: the nominal waits
  const h = fakeHost(t);
  const a = await h.m.start('fix', { type: 'http', url: `${srv.base}/health?token=s3cret`, intervalS: 5, maxConsecutiveFailures: 3, label: 'api' });
  assert.equal(timers.fireOne(), 0, 'the first try at once');
  await until(() => h.record(a.id)?.consecutiveFailures === 1, 'the first failure');
  assert.equal(h.record(a.id)?.reason, 'status 500 (expected 2xx or 3xx)');
  assert.equal(timers.fireOne(), 10_000, 'after one failure: 2 x 5 s');
  await until(() => h.record(a.id)?.consecutiveFailures === 2, 'the second failure');
  assert.equal(timers.fireOne(), 20_000, 'after two: 4 x 5 s');
  await until(() => h.record(a.id)?.lifecycle === 'suspended', 'the suspension');
  const r = h.record(a.id);
  assert.equal(r?.consecutiveFailures, 3);
  assert.equal(r?.ticks, 3);
  assert.equal(r?.reason, 'suspended after 3 failures in a row; the last: status 500 (expected 2xx or 3xx)');
  assert.deepEqual(timers.pending(), [], 'no further try is scheduled');
  assert.equal(srv.seen.requests, 3);
  assert.deepEqual(h.notices.map((n) => n.kind), ['failing', 'suspended'], 'failing once, suspended once: never one per tick');
  assert.equal(h.notices[1].text, `api: suspended after 3 failures in a row; the last: status 500 (expected 2xx or 3xx) (no more requests to ${srv.base}/health)`);
  assert.ok(!JSON.stringify([h.notices, h.logs]).includes('s3cret'), 'the query is never told nor logged');
  assert.equal(srv.seen.maxInFlight, 1, 'never two requests at once');
});

test('the jitter spreads a wait by ±20 %', async (t) => {
  const srv = await server(t, reply(503));
  const timers = fakeTimers(t);
  const draws = [0, 0.999999];
  t.mock.method(Math, 'random', () => /** @type {number} */ (draws.shift()));
  const h = fakeHost(t);
  const a = await h.m.start('fix', { type: 'http', url: `${srv.base}/`, intervalS: 10, maxConsecutiveFailures: 5 });
  timers.fireOne();
  await until(() => h.record(a.id)?.consecutiveFailures === 1, 'the first failure');
  assert.equal(timers.fireOne(), 16_000, '20 s - 20 %');
  await until(() => h.record(a.id)?.consecutiveFailures === 2, 'the second failure');
  assert.ok(Math.abs(timers.fireOne() - 48_000) < 1, '40 s + 20 %');
});

test('failing then recovering: told once each; a match in the ok body is told once, not every tick; a success waits the interval', async (t) => {
  const srv = await server(t, (n, res) => {
    if (n === 1) { res.writeHead(500); res.end(); return; }
    res.writeHead(200, { 'content-type': 'text/plain' });
    res.end(n < 4 ? 'build 42\r\nstatus: READY\n' : 'build 43\nstatus: READY again\n');
  });
  const timers = fakeTimers(t);
  t.mock.method(Math, 'random', () => 0.5);
  const h = fakeHost(t);
  const a = await h.m.start('fix', { type: 'http', url: `${srv.base}/`, intervalS: 5, notifyOn: ['READY'], coalesceSeconds: 1, label: 'dev' });
  timers.fireOne(0);
  await until(() => h.record(a.id)?.consecutiveFailures === 1, 'the failure');
  timers.fireOne(10_000);
  await until(() => h.record(a.id)?.ticks === 2, 'the recovery');
  assert.equal(h.record(a.id)?.consecutiveFailures, 0);
  assert.equal(h.record(a.id)?.reason, undefined, 'no failure shown once recovered');
  timers.fireOne(1000); // the match, coalesced
  assert.equal(timers.fireOne(5000), 5000, 'an ok answer: the next try after the interval');
  await until(() => h.record(a.id)?.ticks === 3, 'the third try');
  assert.equal(timers.pending().filter((x) => x.ms < 5000).length, 0, 'the same READY line: not told again');
  timers.fireOne(5000);
  await until(() => h.record(a.id)?.ticks === 4, 'the fourth try');
  timers.fireOne(1000);
  assert.deepEqual(h.notices.map((n) => [n.kind, n.text, n.lines]), [
    ['failing', 'dev: failing: status 500 (expected 2xx or 3xx); tried again with backoff, suspended after 5 failures in a row', undefined],
    ['recovered', 'dev: recovered: status 200 after 1 failure', undefined],
    ['match', 'dev: 1 new line matched', ['status: READY']],
    ['match', 'dev: 1 new line matched', ['status: READY again']],
  ]);
});

test('expectStatus: only that status is ok (a 200 fails when 204 is expected); a 3xx is ok by default and not followed', async (t) => {
  const srv = await server(t, (n, res) => {
    if (n === 1) { res.writeHead(200); res.end(); return; }
    res.writeHead(302, { location: 'http://127.0.0.2:1/elsewhere' });
    res.end();
  });
  const timers = fakeTimers(t);
  const h = fakeHost(t);
  const a = await h.m.start('fix', { type: 'http', url: `${srv.base}/a`, intervalS: 5, expectStatus: 204 });
  timers.fireOne(0);
  await until(() => h.record(a.id)?.consecutiveFailures === 1, 'the failure');
  assert.equal(h.record(a.id)?.reason, 'status 200 (expected 204)');
  const b = await h.m.start('fix', { type: 'http', url: `${srv.base}/b`, intervalS: 5 });
  timers.fireOne(0);
  await until(() => h.record(b.id)?.ticks === 1, 'the redirect answer');
  assert.equal(h.record(b.id)?.consecutiveFailures, 0);
  await sleepReal(50);
  assert.equal(srv.seen.requests, 2, 'the redirect was not followed');
});

test('no answer within timeoutS is a failure: the request is aborted', async (t) => {
  const srv = await server(t, () => { /* never answers */ });
  const timers = fakeTimers(t);
  const h = fakeHost(t);
  const a = await h.m.start('fix', { type: 'http', url: `${srv.base}/slow`, intervalS: 5, timeoutS: 0.3 });
  const began = Date.now();
  timers.fireOne(0);
  await until(() => h.record(a.id)?.consecutiveFailures === 1, 'the timeout', 5000);
  assert.ok(Date.now() - began >= 250, 'after the timeout, not before');
  assert.equal(h.record(a.id)?.reason, 'no answer within 0.3 s');
  await until(() => srv.seen.inFlight === 0, 'the server to see the request dropped');
});

test('a refused connection is a failure', async (t) => {
  const srv = await server(t, reply(200));
  const port = new URL(srv.base).port;
  // a port nobody listens on: the server's, once closed
  const closed = http.createServer();
  await new Promise((r) => closed.listen(0, '127.0.0.1', () => r(undefined)));
  const free = /** @type {import('node:net').AddressInfo} */ (closed.address()).port;
  await new Promise((r) => closed.close(() => r(undefined)));
  assert.notEqual(String(free), port);
  const timers = fakeTimers(t);
  const h = fakeHost(t);
  const a = await h.m.start('fix', { type: 'http', url: `http://127.0.0.1:${free}/`, intervalS: 5 });
  timers.fireOne(0);
  await until(() => h.record(a.id)?.consecutiveFailures === 1, 'the failure');
  assert.equal(h.record(a.id)?.reason, 'connection refused');
});

test('a body over the cap is read up to it: the truncation is counted and the rest not read', async (t) => {
  const big = `${'x'.repeat(OUTPUT_CAP_BYTES * 4)}\nERROR at the end\n`;
  const srv = await server(t, reply(200, big));
  const timers = fakeTimers(t);
  const h = fakeHost(t);
  const a = await h.m.start('fix', { type: 'http', url: `${srv.base}/`, intervalS: 5, notifyOn: ['ERROR'] });
  timers.fireOne(0);
  await until(() => h.record(a.id)?.ticks === 1, 'the answer');
  assert.equal(h.record(a.id)?.truncations, 1);
  assert.equal(h.record(a.id)?.consecutiveFailures, 0, 'a truncated body is still an answer');
  assert.equal(timers.pending().filter((x) => x.ms < 5000).length, 0, 'the line past the cap is not matched');
});

test('stop: the pending try is cancelled and nothing more is asked', async (t) => {
  const srv = await server(t, reply(200));
  const timers = fakeTimers(t);
  const h = fakeHost(t);
  const a = await h.m.start('fix', { type: 'http', url: `${srv.base}/`, intervalS: 5 });
  timers.fireOne(0);
  await until(() => h.record(a.id)?.ticks === 1, 'the first answer');
  await h.m.stop('fix', a.handle);
  assert.deepEqual(timers.pending(), []);
  assert.equal(h.record(a.id)?.lifecycle, 'stopped');
});

test('after a restart an http monitor resumes at once, its failures on record still counted toward the suspension', async (t) => {
  const srv = await server(t, reply(500));
  const timers = fakeTimers(t);
  const h = fakeHost(t);
  const a = await h.m.start('fix', { type: 'http', url: `${srv.base}/`, intervalS: 5, maxConsecutiveFailures: 2 });
  timers.fireOne(0);
  await until(() => h.record(a.id)?.consecutiveFailures === 1, 'the first failure');
  h.m.close();
  const again = fakeHost(t, { dir: h.dir });
  again.m.loadAll();
  again.m.apply({ actions: [{ id: a.id, action: 'resume', why: 'read-only: resumes' }], summary: '' });
  timers.fireOne(0);
  await until(() => again.record(a.id)?.lifecycle === 'suspended', 'the suspension after the restart');
  assert.equal(again.record(a.id)?.consecutiveFailures, 2);
});

test('the URL shown keeps scheme, host, port and path only; statuses; failures in words', () => {
  assert.equal(shownUrl('https://user:pw@example.com/a/b?token=x#frag'), 'https://example.com:443/a/b');
  assert.equal(shownUrl('http://127.0.0.1:8080/health'), 'http://127.0.0.1:8080/health');
  assert.equal(statusOk(200, undefined), true);
  assert.equal(statusOk(399, undefined), true);
  assert.equal(statusOk(404, undefined), false);
  assert.equal(statusOk(500, 500), true);
  assert.equal(statusOk(200, 204), false);
  assert.equal(failureOf(Object.assign(new Error('x'), { code: 'ECONNREFUSED' }), 2), 'connection refused');
  assert.equal(failureOf(Object.assign(new Error('x'), { name: 'TimeoutError' }), 2), 'no answer within 2 s');
  assert.equal(failureOf(Object.assign(new Error('x'), { code: 'DEPTH_ZERO_SELF_SIGNED_CERT' }), 2), 'TLS: DEPTH_ZERO_SELF_SIGNED_CERT');
});
