// @ts-check
'use strict';
// sbctl doctor on the sessions' share of the CPU: units/sessions.slice's CPUWeight counts only
// where the user manager has the cpu controller. The real cgroups: guest 20 (doctor) and guest
// 46 (the weight in force), and bench:storm.
const test = require('node:test');
const assert = require('node:assert/strict');
const { cpuCheck, formatChecks, sbdGroupName } = require('../../../dist/cli/doctor.js');

const MGR = '/sys/fs/cgroup/user.slice/user-1000.slice/user@1000.service';

test('doctor, cpu delegated and the sessions\' slice running: OK, with its weight and its siblings\' as the kernel has them', () => {
  const c = cpuCheck('cpuset cpu io memory pids', '20', MGR, { 'sbd.service': '1000', 'init.scope': '100' });
  assert.equal(c.ok, true);
  assert.equal(c.detail, `${MGR}/sessions.slice: cpu.weight 20 (sbd.service: 1000, init.scope: 100), so the sessions yield the CPU to sbd and systemd --user`);
  assert.match(cpuCheck('cpu memory', '20', MGR, { 'app.slice': '100', 'init.scope': '100' }).detail, /cpu\.weight 20 \(app\.slice: 100, init\.scope: 100\)/, 'sbd from a unit installed before Slice=-.slice');
  assert.match(cpuCheck('cpu memory', '20', MGR, { 'app.slice': undefined }).detail, /cpu\.weight 20 \(its siblings' not readable\)/);
});

test('doctor, the sessions\' slice not lighter than sbd\'s or systemd --user\'s: FAIL, naming which and how to mend it', () => {
  const c = cpuCheck('cpu memory pids', '100', MGR, { 'app.slice': '100', 'init.scope': '50' });
  assert.equal(c.ok, false);
  assert.equal(c.detail, `${MGR}/sessions.slice: cpu.weight 100, not below app.slice's 100 or init.scope's 50: in a storm of sessions against their brakes, sbd and systemd --user wait for a CPU behind them`);
  assert.equal(c.fix, 'give sessions.slice a lighter CPUWeight than app.slice and init.scope (its unit file says CPUWeight=20: sbctl install puts it back; systemctl --user show -p CPUWeight sessions.slice app.slice init.scope says what each has)');
  assert.equal(cpuCheck('cpu memory pids', '100', MGR, { 'app.slice': '500', 'init.scope': '500' }).ok, true, 'lighter than both: OK');
  assert.equal(cpuCheck('cpu memory pids', '20', MGR, { 'app.slice': '10', 'init.scope': '100' }).ok, false, 'sbd\'s slice made lighter than the sessions');
});

test('doctor, cpu delegated, no session running: OK, and says when the weight applies', () => {
  const c = cpuCheck('cpu memory pids', undefined, MGR);
  assert.equal(c.ok, true);
  assert.match(c.detail, /cpu delegated; sessions\.slice takes its weight when a session runs/);
});

test('doctor, no cpu controller for the user manager: FAIL, naming the cgroup, the effect and Delegate=cpu', () => {
  const c = cpuCheck('memory pids', undefined, MGR);
  assert.equal(c.ok, false);
  assert.match(c.detail, new RegExp(`^${MGR}: no cpu controller \\("memory pids"\\)`));
  assert.match(c.detail, /sbd judges late/);
  assert.match(formatChecks([c]), /\n      fix: add Delegate=cpu to user@\.service/);
});

test('doctor, sbd\'s group: sbd.service straight under the manager where it runs so (units/sbd.service, Slice=-.slice), else app.slice, where an older unit put it', () => {
  assert.equal(sbdGroupName((name) => name === 'sbd.service' || name === 'app.slice'), 'sbd.service');
  assert.equal(sbdGroupName((name) => name === 'app.slice'), 'app.slice');
  assert.equal(sbdGroupName(() => false), 'app.slice', 'sbd not running: app.slice, which holds the user\'s other services');
});

test('doctor, a controller whose name only contains cpu (cpuset) is not cpu', () => {
  assert.equal(cpuCheck('cpuset memory pids', '20', MGR).ok, false);
});
