// @ts-check
'use strict';
// sbctl doctor on the sessions' share of the CPU: units/sessions.slice's CPUWeight counts only
// where the user manager has the cpu controller. The real cgroups: guest 20 (doctor) and guest
// 46 (the weight in force), and bench:storm.
const test = require('node:test');
const assert = require('node:assert/strict');
const { cpuCheck, formatChecks } = require('../../../dist/cli/doctor.js');

const MGR = '/sys/fs/cgroup/user.slice/user-1000.slice/user@1000.service';

test('doctor, cpu delegated and the sessions\' slice running: OK, with its weight as the kernel has it', () => {
  const c = cpuCheck('cpuset cpu io memory pids', '20', MGR);
  assert.equal(c.ok, true);
  assert.equal(c.detail, `${MGR}/sessions.slice: cpu.weight 20 (the user manager's own units: 100), so the sessions yield the CPU to sbd and systemd --user`);
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

test('doctor, a controller whose name only contains cpu (cpuset) is not cpu', () => {
  assert.equal(cpuCheck('cpuset memory pids', '20', MGR).ok, false);
});
