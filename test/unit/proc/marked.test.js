// @ts-check
'use strict';
// The leftover reaper's marker scan leaves a session's monitors alone: their unit ends with the
// session unless detached (issue 13; guest 48 saw the reaper kill a monitor's process first).
// A fake /proc of this uid's processes (meta oomd style).
const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { markedWith } = require('../../../dist/proc/scan.js');

function fakeProc(t, procs) {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'sb-proc-'));
  t.after(() => fs.rmSync(root, { recursive: true, force: true }));
  const uid = process.getuid?.() ?? 1000;
  for (const [pid, env] of Object.entries(procs)) {
    const dir = path.join(root, pid);
    fs.mkdirSync(dir);
    fs.writeFileSync(path.join(dir, 'stat'), `${pid} (node) S 1 ${pid} ${pid} 0 -1 4194560 0 0 0 0 1 1 0 0 20 0 1 0 100 1000 10 18446744073709551615 1 1 0 0 0 0 0 0 0 0 0 0 17 1 0 0 0 0 0 0 0 0 0 0 0 0 0`);
    fs.writeFileSync(path.join(dir, 'status'), `Name:\tnode\nUid:\t${uid}\t${uid}\t${uid}\t${uid}\n`);
    fs.writeFileSync(path.join(dir, 'cmdline'), 'node\0');
    fs.writeFileSync(path.join(dir, 'environ'), `${Object.entries(env).map(([k, v]) => `${k}=${v}`).join('\0')}\0`);
  }
  return root;
}

test('a session\'s marked leftovers, but not its monitors\' processes', (t) => {
  const root = fakeProc(t, {
    101: { SESSIONBRAKE_SESSION: 'mon1', PATH: '/usr/bin' },
    102: { SESSIONBRAKE_SESSION: 'mon1', SESSIONBRAKE_MONITOR: '6c4ae06a-88e4-4b4e-973e-580e6a1abd2f' },
    103: { SESSIONBRAKE_SESSION: 'other' },
  });
  assert.deepEqual(markedWith('mon1', root).map((p) => p.pid), [101]);
});
