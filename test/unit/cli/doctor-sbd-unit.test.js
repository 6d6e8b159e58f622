// @ts-check
'use strict';
// sbctl doctor on sbd's own unit. sbd reads a unit only once systemd says it has it loaded
// (getUnit asks GetUnit first, so as not to load stubs), and systemd loads a unit file on demand:
// an installed sbd.service neither running nor enabled is not loaded, and is not "not installed".
const test = require('node:test');
const assert = require('node:assert/strict');
const { sbdUnitCheck } = require('../../../dist/cli/doctor.js');

const FILE = '/home/u/.config/systemd/user/sbd.service';

test('doctor, sbd unit: active is OK; loaded and not active FAILs with its state', () => {
  assert.deepEqual(sbdUnitCheck('active', FILE), { name: 'sbd unit', ok: true, detail: 'sbd.service is active', fix: 'sbctl install --now' });
  assert.equal(sbdUnitCheck('failed', FILE).detail, 'sbd.service is failed');
  assert.equal(sbdUnitCheck('failed', FILE).ok, false);
});

test('doctor, sbd unit not loaded: installed but neither running nor enabled, or not installed at all', () => {
  const c = sbdUnitCheck(undefined, FILE);
  assert.equal(c.ok, false);
  assert.equal(c.detail, `sbd.service is installed (${FILE}) but not loaded: neither running nor enabled`);
  assert.equal(sbdUnitCheck(undefined, undefined).detail, 'sbd.service is not installed');
  assert.equal(sbdUnitCheck(undefined, undefined).fix, 'sbctl install --now');
});
