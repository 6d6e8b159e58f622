// @ts-check
'use strict';
// Shared by the slice guest tests (36-38, issue 11): the nbr.slice under a collective brake, an
// innocent session that keeps working (a line per 10 rounds) and a greedy stand-in agent.
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { waitFor } = require('./helpers');
const { startSbd, incidentCollector, runSession, startAgent, stopSessions, systemctl } = require('./sbd-helpers');

const MiB = 2 ** 20;
const NBR = '/sys/fs/cgroup/user.slice/user-1000.slice/user@1000.service/nbr.slice';
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

// Holds 165 MiB and keeps mapping, touching and unmapping 16 MiB; prints a line per 10 rounds.
const INNOCENT = `
import mmap, sys, time
keep = [b"\\x01" * (1 << 20) for _ in range(165)]
n = 0
while True:
    m = mmap.mmap(-1, 16 << 20)
    for off in range(0, 16 << 20, 4096): m[off] = 2
    m.close(); n += 1
    if n % 10 == 0: print("round", n, flush=True)
    time.sleep(0.01)
`;
const rounds = (out) => (out.match(/^round \d+$/gm) ?? []).length * 10;

function nbrSlice(high) {
  const unitDir = path.join(os.homedir(), '.config/systemd/user');
  fs.mkdirSync(unitDir, { recursive: true });
  fs.writeFileSync(path.join(unitDir, 'nbr.slice'), `[Slice]\nMemoryHigh=${high}\nMemorySwapMax=0\n`);
  systemctl('daemon-reload');
  // a runtime raise of an earlier test must not linger in the slice
  systemctl('set-property', '--runtime', 'nbr.slice', `MemoryHigh=${high}`);
}

async function innocentAndGreedy(t, config) {
  nbrSlice('320M');
  await startSbd({ slices: ['nbr.slice'], detector: { graceS: 10 }, stop: { termToKillS: 5 }, ...config });
  const inc = await incidentCollector();
  t.after(() => { inc.close(); stopSessions('innocent', 'greedy'); });
  const innocent = runSession('innocent', ['--slice', 'nbr.slice', '--memory-high', '2G', '--swap-max', '0'], ['python3', '-c', INNOCENT]);
  await waitFor(() => rounds(innocent.output()) >= 10, 60_000, { what: 'the innocent to work' });
  const greedy = await startAgent('greedy', 900, 150, ['--slice', 'nbr.slice', '--memory-high', '2G', '--swap-max', '0']);
  return { inc, innocent, greedy };
}


module.exports = { MiB, NBR, sleep, INNOCENT, rounds, nbrSlice, innocentAndGreedy };
