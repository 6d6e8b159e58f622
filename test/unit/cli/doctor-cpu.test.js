// @ts-check
'use strict';
// sbctl doctor on sbd's CPU share: units/sbd.service's CPUWeight counts only where the user
// manager has the cpu controller. The real cgroups: guest 46 (the weight in force) and bench:storm.
const test = require('node:test');
const assert = require('node:assert/strict');
const { cpuCheck, formatChecks } = require('../../../dist/cli/doctor.js');

const MGR = '/sys/fs/cgroup/user.slice/user-1000.slice/user@1000.service';

test('doctor, cpu delegated and handed down: OK, the weight counts against the sessions as one group', () => {
  const c = cpuCheck('cpuset cpu io memory pids', 'cpu memory pids', MGR);
  assert.equal(c.ok, true);
  assert.match(c.detail, /cpu handed down/);
});

test('doctor, cpu delegated but not handed down yet (no unit with a weight running): OK, and says what hands it down', () => {
  const c = cpuCheck('cpu memory pids', 'memory pids', MGR);
  assert.equal(c.ok, true);
  assert.match(c.detail, /not handed down yet: .*sbd\.service as sbctl install writes it/);
});

test('doctor, no cpu controller for the user manager: FAIL, naming the cgroup, the effect and Delegate=cpu', () => {
  const c = cpuCheck('memory pids', 'memory pids', MGR);
  assert.equal(c.ok, false);
  assert.match(c.detail, new RegExp(`^${MGR}: no cpu controller \\("memory pids"\\)`));
  assert.match(c.detail, /as an equal/);
  assert.match(formatChecks([c]), /\n      fix: add Delegate=cpu to user@\.service/);
});

test("doctor, a controller whose name only contains cpu (cpuset) is not cpu", () => {
  assert.equal(cpuCheck('cpuset memory pids', 'cpuset memory', MGR).ok, false);
});
