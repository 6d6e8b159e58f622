// @ts-check
'use strict';
// Issue 15: `sbctl status` in one D-Bus call without dbus-next. The small wire client reads what
// dbus-next (sbd's side) writes, byte for byte, and dbus-next reads the calls it writes; against a
// real dbus-daemon with sbd's interface exported, `sbctl status --json` answers by GetStatus with
// the same report as the full path, and falls back to the full path when sbd is not there.
const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { spawn, spawnSync } = require('node:child_process');
const fc = require('fast-check');
const { marshallMessage } = require('dbus-next/lib/marshall-compat');
const { unmarshall } = require('dbus-next/lib/message');
const dbus = require('dbus-next');
const { decodeMessage, encodeMethodCall, messageLength, parseSignature, WireError } = require('../../../dist/bus-lite/wire.js');
const { callOnce, socketOf, BusLiteError } = require('../../../dist/bus-lite/call.js');
const { statusToJson, statusFromJson, encodedStatusFromJson } = require('../../../dist/daemon/status-json.js');
const { renderStatus } = require('../../../dist/cli/status-render.js');
const { exportService } = require('../../../dist/daemon/bus-service.js');
const { plainStatusArgs } = require('../../../dist/cli/status-args.js');
const { privateBus } = require('../../support/dbus-daemon');
const { BASIC_STRUCT, basicValues, dictKey, text } = require('../../support/dbus-arbitraries');

const SBCTL = path.resolve(__dirname, '../../../dist/cli/main.js');
const MiB = 2 ** 20;
const health = { running: true, pid: 4242, version: '0.1.0', uptimeS: 12.5, feed: 'psi', observeOnly: false, slices: ['sessions.slice'] };
const row = (name, extra = {}) => ({
  name, unit: `${name}.scope`, state: 'ok', deadlineS: null, lastAction: null, feed: 'psi',
  currentBytes: 10 * MiB, highBytes: 64 * MiB, maxBytes: Infinity, swapMaxBytes: 0, anonShare: 0.5,
  pressureFullAvg10: null, processes: 3, biggest: { name: 'python3', pid: 77, rssBytes: 9 * MiB }, heartbeatAgeS: 4.25, ...extra,
});
const slice = {
  slice: 'sessions.slice', state: 'standing-still', cause: 'slice-brake', currentBytes: 900 * MiB, highBytes: 1024 * MiB, maxBytes: Infinity, memAvailableBytes: 700 * MiB,
  members: [{ path: 'a.scope', currentBytes: 800 * MiB, growthBytes: -5, fairShareBytes: 512 * MiB }], culprit: { path: 'a.scope', rule: 'growth', why: 'grew 700M' }, deadlineS: 170.5, lastAction: '22:00:01 culprit: a', feed: 'psi',
};

/** A METHOD_RETURN as dbus-next (sbd's side) writes it. */
const answer = (signature, body) => marshallMessage({ type: 2, serial: 9, replySerial: 2, destination: ':1.7', signature, body })[0];

test('GetStatus\'s text, as dbus-next sends it, decodes into the same report (infinity, none, slices, unicode, a session called "infinity")', () => {
  const sessions = [row('büild-1', { state: 'standing-still', deadlineS: 170.25, lastAction: '22:00 standing-still: …', pressureFullAvg10: 0.68 }), row('quiet', { biggest: null, heartbeatAgeS: null, feed: null }), row('infinity')];
  const report = { service: health, sessions, slices: [slice] };
  const msg = answer('s', [statusToJson(report)]);
  assert.equal(messageLength(msg), msg.length);
  const decoded = decodeMessage(msg);
  assert.deepEqual([decoded.type, decoded.replySerial, decoded.signature], [2, 2, 's']);
  assert.deepEqual(statusFromJson(decoded.body[0]), report);
  assert.equal(statusFromJson(statusToJson({ service: health, sessions })).slices, undefined, 'no slices key when sbd does not arbitrate them');
  // --json prints sbd's text again without reviver or replacer: the very text of the decoded report's
  const text = statusToJson(report);
  assert.equal(JSON.stringify(encodedStatusFromJson(text), null, 2), renderStatus(statusFromJson(text), true));
  assert.throws(() => encodedStatusFromJson('{"service": {}}'), /not a status report/);
  assert.throws(() => statusFromJson('[1,2]'), /not a status report/);
  assert.throws(() => statusFromJson('{"service": 1'), SyntaxError);
});

// (dicts are never empty here: dbus-next 0.10.2 writes an empty dict without the padding to 8 that
// the specification puts after every array's length; the reader follows the specification, and
// GetStatus's answer holds no dict; nor a key dbus-next's object check trips on, constructor or __proto__, nor an infinite double or the least int64, which dbus-next refuses to write, nor -0, which it writes as 0)
test('property: any values of every basic type, in structs, arrays and dicts, read back as dbus-next wrote them', () => {
  const sig = `${BASIC_STRUCT}asa{su}a(yt)`;
  const basic = basicValues();
  fc.assert(fc.property(basic, fc.array(text()), fc.dictionary(dictKey(), fc.integer({ min: 0, max: 2 ** 32 - 1 }), { minKeys: 1 }), fc.array(fc.tuple(fc.integer({ min: 0, max: 255 }), fc.bigInt({ min: 0n, max: 2n ** 64n - 1n }))), (b, as, dict, pairs) => {
    const got = decodeMessage(answer(sig, [b, as, { ...dict }, pairs])).body; // dbus-next takes only plain objects
    assert.deepEqual(got, [b, as, Object.assign(Object.create(null), dict), pairs]);
  }), { numRuns: 300 });
});

test('the method call as written is what dbus-next reads: header fields, serial, no body', () => {
  const buf = encodeMethodCall(2, { destination: 'dev.sessionbrake.Manager1', path: '/dev/sessionbrake/Manager1', interface: 'dev.sessionbrake.Manager1', member: 'GetStatus' });
  // (dbus-next's reader needs a body signature; a call without one is read by ours, and taken by
  // a real dbus-daemon in the last test)
  const m = decodeMessage(buf);
  assert.deepEqual([m.type, m.serial, m.signature, m.body], [1, 2, '', []]);
  assert.equal(messageLength(buf), buf.length);
  const withSig = unmarshall(encodeMethodCall(2, { destination: 'dev.sessionbrake.Manager1', path: '/dev/sessionbrake/Manager1', interface: 'dev.sessionbrake.Manager1', member: 'GetStatus', signature: 's', body: [''] }));
  assert.deepEqual([withSig.type, withSig.serial, withSig.destination, withSig.path, withSig.interface, withSig.member], [1, 2, 'dev.sessionbrake.Manager1', '/dev/sessionbrake/Manager1', 'dev.sessionbrake.Manager1', 'GetStatus']);
  const withArgs = unmarshall(encodeMethodCall(5, { destination: 'x.y', path: '/p', interface: 'x.y', member: 'M', signature: 'sas(ut)', body: ['hé', ['a', 'b'], [7, 2n ** 64n - 1n]] }));
  assert.deepEqual([withArgs.signature, withArgs.body], ['sas(ut)', ['hé', ['a', 'b'], [7, 2n ** 64n - 1n]]]);
});

test('bad input: a truncated message, a big-endian one and a bad signature are refused by name', () => {
  const msg = answer('s', ['hello']);
  assert.equal(messageLength(msg.subarray(0, 10)), undefined, 'the fixed part is not complete yet');
  assert.throws(() => decodeMessage(msg.subarray(0, msg.length - 3)), WireError);
  const be = Buffer.from(msg);
  be[0] = 0x42;
  assert.throws(() => messageLength(be), /only little-endian/);
  assert.throws(() => parseSignature('(su'), /unclosed struct/);
  assert.throws(() => parseSignature('a{s}'), /dict entry holds two types/);
  assert.throws(() => parseSignature('z'), /unknown type code "z"/);
  assert.equal(socketOf('tcp:host=x;unix:path=/run/user/1000/bus'), '/run/user/1000/bus');
  assert.equal(socketOf('unix:abstract=/tmp/dbus-x,guid=1'), '\0/tmp/dbus-x');
  assert.throws(() => socketOf('tcp:host=localhost,port=1'), /no unix socket/);
});

test('plain status command lines only take the fast path; everything else goes to commander', () => {
  assert.deepEqual(plainStatusArgs(['status']), { session: undefined, json: false });
  assert.deepEqual(plainStatusArgs(['status', '--json', 'build']), { session: 'build', json: true });
  assert.deepEqual(plainStatusArgs(['status', 'build', '--json']), { session: 'build', json: true });
  for (const a of [['status', '--help'], ['status', 'a', 'b'], ['status', '--json', '--json'], ['-c', 'x', 'status'], ['status', '-h'], ['watch'], [], ['status', '']]) {
    assert.equal(plainStatusArgs(a), undefined, a.join(' '));
  }
});

/** A real dbus-daemon on a socket of our own. */
async function realBus(t) {
  const bus = await privateBus();
  t.after(bus.stop);
  return bus.address;
}

test('against a real dbus-daemon: sbctl status answers by GetStatus, the same report as the full path; without sbd the full path says so', { skip: spawnSync('dbus-daemon', ['--version']).status === 0 ? false : 'dbus-daemon not installed (apt-get install dbus-daemon)' }, async (t) => {
  const address = await realBus(t);
  const env = { ...process.env, DBUS_SESSION_BUS_ADDRESS: address, XDG_CONFIG_HOME: fs.mkdtempSync(path.join(os.tmpdir(), 'sb-cfg-')) };
  const sbctl = (...args) => new Promise((resolve) => {
    const c = spawn(process.execPath, [SBCTL, ...args], { env });
    let out = ''; let err = '';
    c.stdout.on('data', (d) => { out += d; });
    c.stderr.on('data', (d) => { err += d; });
    c.on('exit', (code) => resolve({ code, out, err }));
  });
  // without sbd: the full path runs (its own answer: systemd is not on this bus either)
  const none = await sbctl('status', '--json');
  assert.notEqual(none.code, 0);
  assert.match(none.err, /systemd|org\.freedesktop\.systemd1|ServiceUnknown|not provided/i, none.err);

  let calls = 0;
  const sbd = await dbus.sessionBus({ busAddress: address });
  t.after(() => sbd.disconnect());
  const sessions = [row('build', { state: 'standing-still', deadlineS: 100 }), row('quiet')];
  await exportService(sbd, { health: () => { calls++; return health; }, sessions: () => sessions, slices: () => [slice] });
  const fast = await sbctl('status', '--json');
  assert.equal(fast.code, 0, fast.err);
  const report = JSON.parse(fast.out);
  assert.deepEqual(report.sessions.map((s) => [s.name, s.state, s.maxBytes]), [['build', 'standing-still', 'infinity'], ['quiet', 'ok', 'infinity']]);
  assert.equal(report.slices[0].culprit.rule, 'growth');
  assert.equal(calls, 1, 'one call: GetStatus read the health once');
  // the full program (commander, dbus-next) prints the same report, by GetStatus too: one call
  const full = await sbctl('-c', path.join(env.XDG_CONFIG_HOME, 'none.json'), 'status', '--json');
  assert.equal(full.code, 0, full.err);
  assert.deepEqual(JSON.parse(full.out), report);
  assert.equal(fast.out, full.out, 'the same text, though the fast path prints sbd\'s without reviving it');
  assert.equal(calls, 1 + 1, 'the full path asked GetStatus alone (the typed properties would read the health once per property)');
  const one = await sbctl('status', 'quiet');
  assert.equal(one.code, 0);
  assert.match(one.out, /^quiet\s+ok/m);
  assert.doesNotMatch(one.out, /^build/m);
  const missing = await sbctl('status', 'nope');
  assert.equal(missing.code, 4);
  assert.match(missing.err, /no session "nope"/);
  const oneJson = await sbctl('status', 'quiet', '--json');
  assert.equal(oneJson.code, 0);
  assert.deepEqual(JSON.parse(oneJson.out).sessions.map((s) => s.name), ['quiet']);
  assert.equal(JSON.parse(oneJson.out).sessions[0].maxBytes, 'infinity');
  const missingJson = await sbctl('status', 'nope', '--json');
  assert.equal(missingJson.code, 4);
  assert.match(missingJson.err, /no session "nope"/);
  await assert.rejects(callOnce(address, { destination: 'dev.sessionbrake.Manager1', path: '/dev/sessionbrake/Manager1', interface: 'dev.sessionbrake.Manager1', member: 'NoSuchMethod' }, 5000), (e) => e instanceof BusLiteError && /UnknownMethod/.test(e.type));
});
