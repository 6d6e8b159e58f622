// @ts-check
'use strict';
const test = require('node:test');
const assert = require('node:assert/strict');
const fc = require('fast-check');
const { unitObjectPath, unitFromObjectPath, isValidUnitName } = require('../../../dist/systemd/names.js');
const { limitFromBus, limitToBus, invocationIdFromBus, UINT64_MAX } = require('../../../dist/systemd/values.js');
const { userBusAddress, NoUserBusError } = require('../../../dist/systemd/address.js');

test('unit object paths are escaped as systemd does', () => {
  // Paths as busctl shows them for these units.
  assert.equal(unitObjectPath('hog.scope'), '/org/freedesktop/systemd1/unit/hog_2escope');
  assert.equal(unitObjectPath('sessions.slice'), '/org/freedesktop/systemd1/unit/sessions_2eslice');
  assert.equal(unitObjectPath('user@1000.service'), '/org/freedesktop/systemd1/unit/user_401000_2eservice');
  assert.equal(unitObjectPath('sb-a_b.scope'), '/org/freedesktop/systemd1/unit/sb_2da_5fb_2escope');
  assert.equal(unitObjectPath('1x.scope'), '/org/freedesktop/systemd1/unit/_31x_2escope');
});

test('object paths decode back to their unit names', () => {
  fc.assert(fc.property(fc.string({ minLength: 1, maxLength: 40 }), (name) => unitFromObjectPath(unitObjectPath(name)) === name));
  assert.equal(unitFromObjectPath('/org/freedesktop/systemd1/job/42'), undefined);
});

test('unit names: what systemd accepts for scopes, services and slices', () => {
  assert.ok(isValidUnitName('sb-build-1.scope'));
  assert.ok(isValidUnitName('sessions.slice'));
  assert.ok(!isValidUnitName('has space.scope'));
  assert.ok(!isValidUnitName('noext'));
  assert.ok(!isValidUnitName(`${'a'.repeat(250)}.scope`));
});

test('uint64 limits: CGROUP_LIMIT_MAX is Infinity, both ways', () => {
  assert.equal(limitFromBus(UINT64_MAX), Infinity);
  assert.equal(limitFromBus(67108864n), 67108864);
  assert.equal(limitToBus(Infinity), UINT64_MAX);
  assert.equal(limitToBus(512 * 1024 * 1024), 536870912n);
  assert.throws(() => limitToBus(-1), RangeError);
  assert.throws(() => limitToBus(1.5), RangeError);
  assert.equal(invocationIdFromBus(Buffer.from('00112233445566778899aabbccddeeff', 'hex')), '00112233445566778899aabbccddeeff');
});

test('the user bus address: explicit, else $XDG_RUNTIME_DIR/bus, else a precise error', () => {
  assert.equal(userBusAddress({ DBUS_SESSION_BUS_ADDRESS: 'unix:path=/x', XDG_RUNTIME_DIR: '/run/user/1' }), 'unix:path=/x');
  assert.equal(userBusAddress({ XDG_RUNTIME_DIR: '/run/user/1000' }), 'unix:path=/run/user/1000/bus');
  assert.throws(() => userBusAddress({}), (err) => err instanceof NoUserBusError && /loginctl enable-linger/.test(err.message));
});
