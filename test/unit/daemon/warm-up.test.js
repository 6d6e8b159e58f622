// @ts-check
'use strict';
// Issue 15, item 5: the warm-up takes a feed's windows from a wake to a verdict on sbd's own
// cgroup's files (here a fake cgroup tree, the wedged fixture), encodes each verdict's incident,
// never holds the loop past its slice, and leaves nothing open or armed. Its speed is a bench
// (npm run bench:warm-up), not a test.
const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { startWarmUp, asStalled, encodedSize, warmIncident, ownCgroupDir, WARM_UP_SLICE_MS } = require('../../../dist/daemon/warm-up.js');
const { detectorSchema } = require('../../../dist/config/schema.js');
const { decodeMessage } = require('../../../dist/bus-lite/wire.js');
const { incidentToBus, INCIDENT_SIGNATURE } = require('../../../dist/daemon/bus-types.js');
const { encodeSignal } = require('../../../dist/bus-lite/wire.js');

const FIXTURE = path.join(__dirname, '..', '..', 'fixtures', 'cgroup', 'sessions.slice', 'wedged.scope');
const config = detectorSchema.parse({});

function fakeCgroup() {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sb-warm-test-'));
  for (const f of fs.readdirSync(FIXTURE)) fs.copyFileSync(path.join(FIXTURE, f), path.join(dir, f));
  return dir;
}

/** A clock that moves `stepMs` at each reading, and a `later` that runs the next slice at once (counting the slices). */
function driven(stepMs) {
  let t = 0;
  const slices = [];
  return { now: () => (t += stepMs), later: (fn) => slices.push(fn), run: () => { while (slices.length) slices.shift()(); }, slices };
}

const openFds = () => fs.readdirSync('/proc/self/fd').length;

test('a round of four windows reaches a standing-still verdict on the fixture\'s files, read through held fds, and closes them at the end', async () => {
  const dir = fakeCgroup();
  const before = openFds();
  const d = driven(0.01);
  const w = startWarmUp({ config, dir, now: d.now, later: d.later, rounds: 40 });
  assert.ok(openFds() > before, 'the sample files are held while it runs');
  d.run();
  const r = await w.done;
  assert.equal(r.rounds, 40);
  assert.equal(r.read, true);
  // wake's first sample, then three hot onset windows to a verdict; each verdict starts a new episode (a first sample again)
  assert.equal(r.verdicts, 10);
  assert.ok(r.encodedBytes > 10 * 200, `encoded ${r.encodedBytes} bytes`);
  assert.equal(openFds(), before, 'every file it opened is closed');
  fs.rmSync(dir, { recursive: true });
});

test('it yields once a slice has run WARM_UP_SLICE_MS, whatever the rounds left', async () => {
  const d = driven(1); // each reading of the clock 1 ms later: a slice ends after a few rounds
  const w = startWarmUp({ config, dir: fakeCgroup(), now: d.now, later: d.later, rounds: 200 });
  let slices = 0;
  while (d.slices.length) {
    d.slices.shift()();
    slices++;
  }
  const r = await w.done;
  assert.equal(r.rounds, 200);
  assert.ok(slices >= 200 / WARM_UP_SLICE_MS, `${slices} slices for 200 rounds at 1 ms a clock reading`);
});

test('without a cgroup to read (cgroup v1, no memory controller) the rounds go on with synthetic samples', async () => {
  const none = driven(0.01);
  const a = startWarmUp({ config, dir: undefined, now: none.now, later: none.later, rounds: 20 });
  none.run();
  const ra = await a.done;
  assert.equal(ra.read, false);
  assert.equal(ra.rounds, 20);
});

test('stop() ends it before its rounds, and no slice runs after', async () => {
  const d = driven(0.01);
  const w = startWarmUp({ config, dir: fakeCgroup(), now: d.now, later: d.later, rounds: 1000 });
  w.stop();
  d.run();
  const r = await w.done;
  assert.equal(r.rounds, 0);
});

test('asStalled keeps the sample\'s shape and gives it a stall\'s figures; the incident encodes as a journal entry and a signal that decodes', () => {
  const raw = { atMs: 0, currentBytes: 5, highBytes: 64, maxBytes: Infinity, swapMaxBytes: Infinity, anonBytes: 1, shmemBytes: 2, fileBytes: 3, ownHighEvents: 0, oomKills: 0, pressureFullUs: 0, pressureSomeUs: 0, cpuSomeUs: 0 };
  const keys = Object.keys(raw);
  const s = asStalled(raw, 500, 400_000, 7);
  assert.equal(s, raw);
  assert.deepEqual(Object.keys(s), keys);
  assert.deepEqual([s.atMs, s.currentBytes, s.anonBytes, s.fileBytes, s.shmemBytes, s.ownHighEvents, s.pressureFullUs], [500, 64, 64, 0, 0, 7, 400_000]);
  const v = { event: 'standing-still', state: 'standing-still', window: { kind: 'hot', share: 0.8, anonShare: 1, evidence: ['own-high-moved'] }, hotWindows: 3, deadlineRemainingMs: 600_000, explain: 'hot' };
  const i = warmIncident(/** @type {any} */ (v));
  assert.equal(i.type, 'standing-still');
  assert.equal(i.deadlineS, 600);
  const n = encodedSize(i, 1);
  const signal = encodeSignal(1, { path: '/dev/sessionbrake/Manager1', interface: 'dev.sessionbrake.Manager1', member: 'Incident', signature: INCIDENT_SIGNATURE, body: incidentToBus(i) });
  const m = decodeMessage(signal);
  assert.deepEqual([m.signature, m.body[0], m.body[1]], [INCIDENT_SIGNATURE, 'standing-still', 'warm-up.scope']);
  assert.ok(n > signal.length, 'the journal entry\'s bytes and the signal\'s');
});

test('ownCgroupDir reads the unified line of /proc/self/cgroup, and says undefined without one', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sb-warm-cg-'));
  fs.writeFileSync(path.join(dir, 'v2'), '0::/user.slice/user-1000.slice/user@1000.service/app.slice/sbd.service\n');
  fs.writeFileSync(path.join(dir, 'v1'), '12:memory:/user.slice\n1:name=systemd:/user.slice\n');
  assert.equal(ownCgroupDir(path.join(dir, 'v2'), '/sys/fs/cgroup'), '/sys/fs/cgroup/user.slice/user-1000.slice/user@1000.service/app.slice/sbd.service');
  assert.equal(ownCgroupDir(path.join(dir, 'v1')), undefined);
  assert.equal(ownCgroupDir(path.join(dir, 'missing')), undefined);
  fs.rmSync(dir, { recursive: true });
});
