// @ts-check
'use strict';
// sbd's HTTP /metrics (src/metrics/http.ts, start.ts) on a real loopback socket, an ephemeral port.
const test = require('node:test');
const assert = require('node:assert/strict');
const http = require('node:http');
const net = require('node:net');
const { serveMetrics } = require('../../../dist/metrics/http.js');
const { startMetrics } = require('../../../dist/metrics/start.js');

const view = () => ({ sessions: [{ name: 'a', slice: 'sessions.slice', state: 'hot', feed: 'psi', standingStillS: undefined, memoryHighBytes: 1 }], monitors: [] });
const silent = { info() {}, warn() {}, error() {}, debug() {} };

/** One request; resolves with status, headers and body. */
function request(port, method, path, host = '127.0.0.1') {
  return new Promise((resolve, reject) => {
    const req = http.request({ host, port, method, path }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (d) => { body += d; });
      res.on('end', () => resolve({ status: res.statusCode, headers: res.headers, body }));
    });
    req.on('error', reject);
    req.end();
  });
}

test('GET /metrics answers the exposition; other paths 404; other methods 405', async (t) => {
  const m = startMetrics({ config: { httpListen: { host: '127.0.0.1', port: 0 }, perSession: false }, version: '1', graceS: 1, slices: ['sessions.slice'], view, log: silent, user: 'carol' });
  t.after(() => m.close());
  await m.ready;
  const server = m.http();
  assert.ok(server, 'listening');
  const port = server.address().port;
  const ok = await request(port, 'GET', '/metrics');
  assert.equal(ok.status, 200);
  assert.match(ok.headers['content-type'], /^text\/plain; version=0\.0\.4/);
  assert.match(ok.body, /^sessionbrake_sessions\{state="hot",slice="sessions\.slice",user="carol"\} 1$/m);
  assert.equal((await request(port, 'GET', '/metrics?x=1')).status, 200, 'a query string is ignored');
  for (const p of ['/', '/metrics/', '/metricsx', '/favicon.ico']) assert.equal((await request(port, 'GET', p)).status, 404, p);
  for (const method of ['POST', 'PUT', 'DELETE', 'HEAD']) {
    const r = await request(port, method, '/metrics');
    assert.equal(r.status, 405, method);
    assert.equal(r.headers.allow, 'GET');
  }
});

test('on [::1] too', async (t) => {
  let server;
  try {
    server = await serveMetrics({ host: '::1', port: 0 }, { render: async () => 'x 1\n', contentType: 'text/plain' });
  } catch (err) {
    t.skip(`no IPv6 loopback here: ${err.code}`);
    return;
  }
  t.after(() => server.close());
  assert.equal((await request(server.address().port, 'GET', '/metrics', '::1')).body, 'x 1\n');
});

test('a port in use: warned, naming it and what to do; the textfile side goes on', async (t) => {
  const busy = net.createServer();
  await new Promise((r) => busy.listen(0, '127.0.0.1', r));
  t.after(() => busy.close());
  const port = busy.address().port;
  const warnings = [];
  const m = startMetrics({ config: { httpListen: { host: '127.0.0.1', port }, perSession: false }, version: '1', graceS: 1, slices: [], view, log: { ...silent, warn: (f, msg) => warnings.push({ ...f, msg }) }, user: 'carol' });
  t.after(() => m.close());
  await m.ready;
  assert.equal(m.http(), undefined);
  assert.equal(warnings.length, 1);
  assert.equal(warnings[0].event, 'metrics-http-failed');
  assert.match(warnings[0].msg, new RegExp(`cannot serve metrics on 127\\.0\\.0\\.1:${port}: the port is in use: choose another metrics\\.httpListen`));
});

test('closed with sbd: the port is free again', async () => {
  const m = startMetrics({ config: { httpListen: { host: '127.0.0.1', port: 0 }, perSession: false }, version: '1', graceS: 1, slices: [], view, log: silent, user: 'carol' });
  await m.ready;
  const port = m.http().address().port;
  m.close();
  await new Promise((r) => setTimeout(r, 50));
  await assert.rejects(request(port, 'GET', '/metrics'), { code: 'ECONNREFUSED' });
});
