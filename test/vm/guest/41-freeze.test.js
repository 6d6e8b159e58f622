// @ts-check
'use strict';
// Issue 6: the freeze watch, with short test thresholds. It tells; it never stops anything.
const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { labOnly, waitFor } = require('./helpers');
const { startSbd, incidentCollector, runSession, stopSessions } = require('./sbd-helpers');

const FREEZE = { checkS: 2, peggedForS: 6, peggedCpuShare: 0.5, missingAfterS: 5, reminderS: 3600 };

test('a busy loop raises one pegged incident, not one per check, and a recovery when it stops', labOnly, async (t) => {
  await startSbd({ freeze: FREEZE });
  const inc = await incidentCollector();
  t.after(() => { inc.close(); stopSessions('busy1'); });
  const agent = 'import subprocess, sys, time\np = subprocess.Popen([sys.executable, "-c", "while True: pass"])\ntime.sleep(24)\np.kill()\ntime.sleep(600)\n';
  runSession('busy1', [], ['python3', '-c', agent]);
  await inc.wait('busy1', 'pegged', 40_000);
  await inc.wait('busy1', 'recovered', 40_000);
  assert.equal(inc.of('busy1', 'pegged').length, 1, 'told once for the incident');
  assert.ok(inc.of('busy1').every((i) => i.type !== 'will-stop' && i.type !== 'subtree-stopped'), 'it never stops anything');
});

test('a heartbeat that stops raises missing, then recovered when it resumes', labOnly, async (t) => {
  await startSbd({ freeze: FREEZE });
  const inc = await incidentCollector();
  const beat = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'sb-beat-')), 'beat');
  fs.writeFileSync(beat, 'working\n');
  t.after(() => { inc.close(); stopSessions('beat1'); });
  // beats every second for 4 s, pauses 14 s, then beats again
  const agent = `import os, time\nf = ${JSON.stringify(beat)}\nfor i in range(4):\n    os.utime(f); time.sleep(1)\ntime.sleep(14)\nwhile True:\n    os.utime(f); time.sleep(1)\n`;
  runSession('beat1', ['--heartbeat', beat], ['python3', '-c', agent]);
  const missing = await inc.wait('beat1', 'missing', 40_000);
  assert.match(missing.message, /heartbeat not renewed for \d+ s/);
  const recovered = await inc.wait('beat1', 'recovered', 30_000);
  assert.ok(recovered.atMs > missing.atMs);
  assert.equal(inc.of('beat1', 'missing').length, 1);
});
