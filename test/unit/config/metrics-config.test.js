// @ts-check
'use strict';
// The config's metrics block (src/config/schema.ts): defaults, and a precise error for each bad value.
const test = require('node:test');
const assert = require('node:assert/strict');
const { parseConfig } = require('../../../dist/config/load.js');

const bad = (metrics) => {
  try {
    parseConfig({ metrics }, 'c.json');
  } catch (err) {
    return /** @type {Error} */ (err).message;
  }
  return 'accepted';
};

test('by default: no textfile, no HTTP, no per-session series', () => {
  assert.deepEqual(parseConfig({}, 'c.json').metrics, { perSession: false });
});

test('a textfile directory, a name, a loopback listen address and per-session series are read', () => {
  const m = parseConfig({ metrics: { textfileDirectory: '/var/lib/prometheus/node-exporter', textfileName: 'sb-alice.prom', httpListen: '127.0.0.1:9464', perSession: true } }, 'c.json').metrics;
  assert.deepEqual(m, { textfileDirectory: '/var/lib/prometheus/node-exporter', textfileName: 'sb-alice.prom', httpListen: { host: '127.0.0.1', port: 9464 }, perSession: true });
  assert.deepEqual(parseConfig({ metrics: { httpListen: '[::1]:65535' } }, 'c.json').metrics.httpListen, { host: '::1', port: 65535 });
});

test('httpListen: loopback only, with a port; anything else is refused, saying what to write and why', () => {
  const why = '"127.0.0.1:PORT" or "[::1]:PORT" with a port from 1 to 65535, such as "127.0.0.1:9464" (loopback only: on a shared server other users and Prometheus read the metrics through node_exporter\'s textfile collector, metrics.textfileDirectory)';
  for (const v of ['0.0.0.0:9464', '192.168.1.5:9464', 'localhost:9464', '[::]:9464', '::1:9464', '127.0.0.1', '127.0.0.1:0', '127.0.0.1:65536', ':9464', '9464']) {
    assert.equal(bad({ httpListen: v }), `c.json: key "metrics.httpListen": expected ${why}; found ${JSON.stringify(v)}`, v);
  }
  assert.equal(bad({ httpListen: 9464 }), 'c.json: key "metrics.httpListen": expected a string; found 9464');
});

test('textfileDirectory must be absolute; textfileName a *.prom name without a path', () => {
  assert.equal(bad({ textfileDirectory: 'prom' }), 'c.json: key "metrics.textfileDirectory": expected an absolute directory path, such as "/var/lib/prometheus/node-exporter"; found "prom"');
  for (const v of ['sessionbrake.txt', 'a/b.prom', '.hidden.prom', '../x.prom', 'sessionbrake.prom.tmp']) {
    assert.equal(bad({ textfileName: v }), `c.json: key "metrics.textfileName": expected a file name ending in ".prom" (letters, digits, "_", "-", "."), such as "sessionbrake-alice.prom"; found ${JSON.stringify(v)}`, v);
  }
});

test('perSession is a boolean; an unknown key is named', () => {
  assert.equal(bad({ perSession: 'yes' }), 'c.json: key "metrics.perSession": expected a boolean; found "yes"');
  assert.equal(bad({ textfileDir: '/x' }), 'c.json: metrics: unknown key "textfileDir" (misspelt?)');
});
