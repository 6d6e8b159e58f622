// @ts-check
'use strict';
// Issue 5, scenarios 3 and 4: what must never be marked standing still. An innocent session
// throttled only by its slice's collective brake (a greedy neighbour fills it), and honest
// page-cache work under a tight brake.
const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { labOnly, waitFor, hogArgv } = require('./helpers');
const { startSbd, incidentCollector, runSession, stopSessions, systemctl } = require('./sbd-helpers');

test('page-cache work under a tight brake is never marked', labOnly, async (t) => {
  await startSbd({ detector: { graceS: 10 } });
  const inc = await incidentCollector();
  // /var/tmp, not os.tmpdir(): /tmp is a tmpfs on Debian 13, where 800 MB of "file" would be
  // shmem charged to the scope, unreclaimable without swap: no page cache, a wedge instead
  const file = path.join('/var/tmp', `sb-dd-${process.pid}`);
  t.after(() => { inc.close(); stopSessions('cache1'); fs.rmSync(file, { force: true }); });
  // 800 MB through a 64 MiB brake, with fsync: the brake grinds page cache the whole time.
  const s = runSession('cache1', ['--memory-high', '64M', '--swap-max', '0'], ['dd', 'if=/dev/zero', `of=${file}`, 'bs=1M', 'count=800', 'conv=fsync']);
  await waitFor(() => s.child.exitCode !== null, 180_000, { what: 'dd to finish' });
  assert.equal(s.child.exitCode, 0, s.output());
  assert.deepEqual(inc.of('cache1', 'standing-still'), []);
  assert.deepEqual(inc.of('cache1', 'will-stop'), []);
});

/**
 * An innocent session in nbr.slice (a collective brake of 320 MiB; each session's own is 2 GiB)
 * and a greedy neighbour under GREEDY_SLICE filling it: the innocent is never marked.
 */
async function innocentBesideGreedy(t, greedySlice) {
  const unitDir = path.join(os.homedir(), '.config/systemd/user');
  fs.mkdirSync(unitDir, { recursive: true });
  fs.writeFileSync(path.join(unitDir, 'nbr.slice'), '[Slice]\nMemoryHigh=320M\nMemorySwapMax=0\n');
  systemctl('daemon-reload');
  await startSbd({ slices: ['sessions.slice', 'nbr.slice'], detector: { graceS: 10 } });
  const inc = await incidentCollector();
  t.after(() => { inc.close(); stopSessions('innocent', 'greedy'); });
  const innocentPy = `
import mmap, time
keep = [b"\\x01" * (1 << 20) for _ in range(165)]
while True:
    m = mmap.mmap(-1, 16 << 20)
    for off in range(0, 16 << 20, 4096): m[off] = 2
    m.close(); time.sleep(0.01)
`;
  runSession('innocent', ['--slice', 'nbr.slice', '--memory-high', '2G'], ['python3', '-c', innocentPy]);
  await new Promise((r) => setTimeout(r, 8000));
  runSession('greedy', ['--slice', greedySlice, '--memory-high', '2G'], hogArgv(900, 60, true));
  // Watch for 40 s while the slice's brake stalls both. The innocent's own memory.pressure is read
  // every second (not through sbctl: a node start, seconds apart under a busy TCG host), and its
  // stall judged as the detector judges it: the share of a 2 s window stalled (the growth of
  // `full total=`), not the kernel's 10 s average, which smooths bursts away (avg10 reached only
  // 0.15 in a CI run on a loaded host while the windows the detector sees were hot).
  const innocentDir = '/sys/fs/cgroup/user.slice/user-1000.slice/user@1000.service/nbr.slice/innocent.scope';
  /** @type {Array<{ atUs: number, totalUs: number }>} */
  const samples = [];
  let maxAvg10 = 0;
  const end = Date.now() + 40_000;
  while (Date.now() < end) {
    try {
      const text = fs.readFileSync(path.join(innocentDir, 'memory.pressure'), 'utf8');
      const full = /^full avg10=([\d.]+) .* total=(\d+)/m.exec(text);
      if (full) {
        maxAvg10 = Math.max(maxAvg10, Number(full[1]) / 100);
        samples.push({ atUs: Number(process.hrtime.bigint() / 1000n), totalUs: Number(full[2]) });
      }
    } catch { /* not there yet */ }
    await new Promise((res) => setTimeout(res, 1000));
  }
  let maxWindowShare = 0;
  for (let i = 2; i < samples.length; i++) {
    const a = samples[i - 2];
    const b = samples[i];
    maxWindowShare = Math.max(maxWindowShare, (b.totalUs - a.totalUs) / (b.atUs - a.atUs));
  }
  t.diagnostic(`innocent's full pressure: a 2 s window up to ${maxWindowShare.toFixed(2)} stalled, avg10 up to ${maxAvg10.toFixed(2)} (greedy in ${greedySlice})`);
  assert.ok(maxWindowShare > 0.2, 'the innocent session was under real pressure: a 2 s window more than 0.2 stalled, the trip line (else this test proves nothing)');
  assert.deepEqual(inc.of('innocent', 'standing-still'), [], 'the innocent was never marked');
  assert.deepEqual(inc.of('innocent', 'will-stop'), []);
  assert.deepEqual(inc.of('greedy', 'standing-still'), [], 'nor the greedy one: its own brake never fired');
}

test('an innocent session throttled by its slice\'s brake is never marked', labOnly, (t) => innocentBesideGreedy(t, 'nbr.slice'));

// The greedy one is not a session sbd watches (its slice, nbr-sub.slice, nested in nbr.slice, is
// not configured): the innocent is still not alone under the brake, and sbd must see that.
test('nor when the greedy neighbour lives in a nested slice sbd does not watch', labOnly, (t) => innocentBesideGreedy(t, 'nbr-sub.slice'));
