// @ts-check
'use strict';
// Host side of the real-systemd lab: `node --test test/vm/suite.test.js` (npm run test:vm).
// For each guest of SB_VM_GUESTS (default bookworm,trixie,bookworm-psi0): builds/reuses its image,
// boots it (QEMU TCG) with this repository shared read-only at /mnt/proj, runs its
// test/vm/guest/*.test.js in it as user 'tester' and mirrors each guest test as a host subtest of
// the same name (pass/fail/skip/todo) under a describe block named after the guest ('debian 12
// (systemd 252)', with [1/3] to [3/3] where its files are split over several boots), so the host
// summary counts them. SB_VM_LANES guests (default 2) run at once. Each qemu is this process's
// child under pdeathsig SIGKILL, and a watchdog kills them if our parent (the test runner) dies,
// so no qemu outlives the run.
// Env: SB_VM_SKIP=1 (skip, reported as such), SB_VM_GUESTS, SB_VM_LANES (2), SB_VM_FILE_TIMEOUT
//      (600 s per guest file), SB_VM_BUDGET_MIN (60: files not started after it are skipped, with
//      why), SB_VM_BOOT_TIMEOUT (360 s), SB_VM_KEEP_RUN=1 (keep the run dirs),
//      SB_VM_ONLY=30,31 (only the guest files starting so; 99, the lab's self-test, runs only so),
//      SB_VM_ALL_FILES=1 (every file on every
//      guest; by default Debian 13 runs a subset, see GUESTS), SB_VM_APPEND (extra kernel arguments,
//      every guest), and lib.sh's SB_VM_*. SB_VM_SUITE and SB_VM_IMAGE are set per guest here.
const { describe, test, before, after } = require('node:test');
const { spawn } = require('node:child_process');
const { bootPanicOf } = require('./boot-panic');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');

/** The lab's guests: SB_VM_SUITE name -> describe name (the systemd version is checked at boot). */
// `files`: the guest files a guest runs by default (prefixes; all when absent). Debian 13 runs
// what differs between the guests, the addon, raise, stop, both restarts (34, 42), the slice's
// brake (36) and MemoryMax (50), so that CI stays well inside its 90 min on 2 cores: Debian 12's
// whole suite took 45 min alone in a loaded local run (session 5); SB_VM_ALL_FILES=1, or
// SB_VM_ONLY, runs the files asked for on every guest.
// `suite`: the image a variant boots (its key otherwise); `append`: kernel arguments it adds (after
// SB_VM_APPEND's); `exclude`: files that never run on it (they need another kernel), whatever asks;
// `filesOnly`: it runs nothing but `files`, even under SB_VM_ONLY or SB_VM_ALL_FILES.
// 'bookworm-psi0' is Debian 12 booted psi=0, a kernel without PSI (RHEL-family kernels ship it
// off): only the lab check and the file that asserts what sbd does there (39) run on it, and 39
// runs nowhere else.
const GUESTS = /** @type {Record<string, {title: string, suite?: string, debian: string, systemd: number, append?: string, files?: string[], exclude?: string[], filesOnly?: boolean, split?: number}>} */ ({
  bookworm: { title: 'debian 12 (systemd 252)', debian: '12', systemd: 252, exclude: ['39'], split: 3 },
  trixie: { title: 'debian 13 (systemd 257)', debian: '13', systemd: 257, files: ['00', '01', '10', '30', '31', '34', '36', '42', '50'], exclude: ['39'] },
  'bookworm-psi0': { title: 'debian 12 (systemd 252, psi=0)', suite: 'bookworm', debian: '12', systemd: 252, append: 'psi=0', files: ['00', '39'], filesOnly: true },
});
const DEFAULT_GUESTS = 'bookworm,trixie,bookworm-psi0';
/** Guest files run only when SB_VM_ONLY names them: 99 panics a guest's kernel, the lab's self-test. */
const ON_REQUEST = ['99'];
// Guests booted at once. Two: the guest files mostly wait (grace periods, PSI windows, timers), so
// a second guest on the other core nearly halves the wall time on a 2-core machine (measured
// 2026-11-30, see test/vm/README.md); a guest with `split` is booted that many times, its files
// dealt between the boots by their cost.
const LANES = Math.max(1, Number(process.env.SB_VM_LANES || 2));
// What each guest file costs on Debian 12, in seconds: measured in a clean-clone run of .ci/run on
// 2026-11-30, two guests at a time (the whole run 48 min). Only the ratios matter: they balance
// Debian 12's boots (58: alone, one lane: 399, 326 and 326 s, npm install -g compiling the addon;
// 41: 240 s scaled by its own runs before and after its fifth test, 465 s and 565 s, on 2026-12-02). A file
// not listed: 90 s.
const COST_S = /** @type {Record<string, number>} */ ({
  '00': 23, '01': 118, 10: 50, 11: 20, 20: 407, 21: 86, 30: 58, 31: 85, 32: 238, 33: 105, 34: 166, 35: 63, 36: 111, 37: 147, 38: 97,
  39: 176, 40: 142, 41: 290, 42: 101, 43: 212, 44: 79, 46: 105, 47: 68, 48: 251, 49: 165, 50: 170, 51: 57, 52: 47, 53: 55,
  54: 150, 55: 153, 56: 105, 57: 65, 58: 560, 59: 24, 60: 260,
});
const DEFAULT_COST_S = 90;
/** @param {string[]} files */
const costOf = (files) => files.reduce((sum, f) => sum + (COST_S[f.slice(0, 2)] ?? DEFAULT_COST_S), 0);
/**
 * Deal files into `n` parts of nearly equal cost (the longest first, each to the lightest part);
 * each part keeps the files' own order.
 * @param {string[]} files @param {number} n
 */
function dealByCost(files, n) {
  const parts = Array.from({ length: n }, () => /** @type {string[]} */ ([]));
  for (const f of [...files].sort((a, b) => costOf([b]) - costOf([a]))) {
    parts.reduce((min, p) => (costOf(p) < costOf(min) ? p : min)).push(f);
  }
  return parts.filter((p) => p.length > 0).map((p) => p.sort());
}

const HERE = __dirname;
const ROOT = path.resolve(HERE, '..', '..');
const GUEST_DIR = path.join(HERE, 'guest');
const FILE_TIMEOUT_S = Number(process.env.SB_VM_FILE_TIMEOUT || 600);
/**
 * A file's own time-out where the default is too short for what it must do: 58-install's npm
 * install -g of the packed tarball (npm's own work on ~2,000 files, and node-gyp's compile, under
 * TCG) took 476 s beside another guest and 600+ s in a loaded two-lane CI run.
 */
// 41: five tests of the freeze watch, 465-565 s on a quiet host; CI's run of 44d2802 (two guests
// at once) passed all five and reached the time-out in its last
const FILE_TIMEOUT_OVERRIDE_S = /** @type {Record<string, number>} */ ({ 41: 900, 58: 1000 });
const timeoutOf = (file) => Math.max(FILE_TIMEOUT_S, FILE_TIMEOUT_OVERRIDE_S[file.slice(0, 2)] ?? 0);
// CI stops the whole run at 90 min, and then reports nothing at all: past this budget (from the
// suite's start) a guest file is not started, and is reported skipped with the reason, so that a
// slow machine still gets every result that did run. 60 min leaves room for the host's tests (about
// 10 min in CI) and for a file still running when the budget ends.
const BUDGET_S = Number(process.env.SB_VM_BUDGET_MIN || 60) * 60;
const SUITE_T0 = Date.now();
const BOOT_TIMEOUT_S = Number(process.env.SB_VM_BOOT_TIMEOUT || 360);
/** Boots of a guest whose kernel panics while booting: the second one decides. */
const BOOT_ATTEMPTS = 2;
/**
 * Boots of a guest again after its kernel panicked while a file ran (that file then runs again):
 * one: the emulated kernel's own fault is rare (Debian 13's 6.12 under TCG panicked twice in all the
 * lab's runs so far, once booting, once in CI's guest 31; Debian 12's 6.1 never), and a second
 * panic in the same guest fails it, so a project that made the kernel panic would still show.
 */
const MID_RUN_REBOOTS = 1;
const TAIL_LINES = 40;
const ERR_TAIL_LINES = 20;

/** @param {string} text @param {number} n */
const tail = (text, n) => text.split('\n').slice(-n - 1).join('\n').trimEnd();
/** @param {number} ms */
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/**
 * Run a command, stream nothing, collect stdout/stderr; stderr can be passed through instead.
 * @param {string[]} argv @param {{env?: NodeJS.ProcessEnv, passStderr?: boolean}} [opts]
 * @returns {Promise<{rc: number, stdout: string, stderr: string}>}
 */
function run(argv, { env, passStderr = false } = {}) {
  return new Promise((resolve, reject) => {
    const child = spawn(argv[0], argv.slice(1), { env, stdio: ['ignore', 'pipe', passStderr ? 'inherit' : 'pipe'] });
    let stdout = '', stderr = '';
    child.stdout?.on('data', (d) => { stdout += d; });
    child.stderr?.on('data', (d) => { stderr += d; });
    child.on('error', reject);
    child.on('close', (code, signal) => resolve({ rc: code ?? 128 + (signal ? os.constants.signals[signal] : 0), stdout, stderr }));
  });
}

// ---- what a guest run reports (one JSON line per event, see guest-reporter.js) ----
/**
 * @typedef {{message: string, stack?: string, failureType?: string, code?: string}} GuestError
 * @typedef {{sbvm: 'test', event: 'pass'|'fail'|'skip'|'todo', name: string, nesting: number, type: string,
 *            durationMs?: number, skip?: string, todo?: string, error?: GuestError, children: GuestTest[]}} GuestTest
 */

/**
 * Parse the reporter's lines; node reports a test after its subtests (post-order), so a test at
 * nesting n adopts the tests collected at n+1 since the previous one.
 * @param {string} stdout
 */
function parseGuestRun(stdout) {
  /** @type {GuestTest[][]} */
  const pending = [[]];
  let output = '';
  /** @type {string[]} */
  const diagnostics = [];
  for (const line of stdout.split('\n')) {
    /** @type {any} */
    let ev;
    try { ev = line.startsWith('{"sbvm"') ? JSON.parse(line) : undefined; } catch { ev = undefined; }
    if (!ev) { if (line) output += line + '\n'; continue; }
    if (ev.sbvm === 'output') output += ev.message;
    // the guest runner's own summary (tests N, pass N, ...) is noise here: the host counts too
    if (ev.sbvm === 'diagnostic' && !/^(tests|suites|pass|fail|cancelled|skipped|todo|duration_ms) \S+$/.test(ev.message)) {
      diagnostics.push(ev.message);
    }
    if (ev.sbvm !== 'test') continue;
    const n = ev.nesting;
    while (pending.length < n + 2) pending.push([]);
    ev.children = pending[n + 1];
    pending[n + 1] = [];
    pending[n].push(ev);
  }
  return { tests: pending[0], output, diagnostics };
}

/** @param {GuestTest} gt @param {string} file @param {string} outputTail */
function guestError(gt, file, outputTail) {
  const e = gt.error ?? { message: 'failed (no error reported)' };
  const stack = e.stack && !e.stack.includes(e.message) ? e.stack : (e.stack ?? '').split('\n').filter((l) => /^\s+at /.test(l)).join('\n');
  const err = new Error(`[guest ${file}] ${e.message.trimEnd()}\n` + (stack ? `--- guest stack ---\n${stack}\n` : '') +
    `--- ${file}: output (last ${ERR_TAIL_LINES} lines) ---\n${outputTail || '(none)'}`);
  err.name = 'GuestTestFailure';
  err.stack = `${err.name}: ${err.message}`;     // the host's own frames say nothing about a guest failure
  return err;
}

/**
 * Mirror one guest test (and its subtests) as a host subtest with the same name.
 * @param {import('node:test').TestContext} t @param {GuestTest} gt @param {string} file @param {string} outputTail
 */
async function mirror(t, gt, file, outputTail) {
  await t.test(gt.name, async (st) => {
    for (const child of gt.children) await mirror(st, child, file, outputTail);
    if (gt.event === 'skip') return st.skip(gt.skip || 'skipped in the guest');
    if (gt.todo !== undefined) st.todo(gt.todo || 'todo in the guest');
    // a parent failing only because its subtests did fails on the host for the same reason
    if (gt.event === 'fail' && gt.error?.failureType !== 'subtestsFailed') throw guestError(gt, file, outputTail);
  });
}

// Run as root in the guest after each file: leftovers of a crashed or sloppy file must not weigh on
// the next one. Scopes of tester's manager (except its own init.scope) get their brake lifted first
// (a braked task can take minutes to die on 6.1), then SIGKILL + stop; tester processes still in
// lab-runner.service's cgroup (spawned without a scope) are killed. Prints what it cleaned.
const CLEANUP = String.raw`
us() { as-tester systemctl --user "$@"; }
for u in $(us list-units --all --plain --no-legend --type=scope | awk '$1 != "init.scope" {print $1}'); do
  echo "scope $u"
  { us set-property --runtime "$u" MemoryHigh=infinity; us kill -s KILL "$u"; us stop "$u"; } >/dev/null 2>&1
done
for p in $(cat /sys/fs/cgroup/system.slice/lab-runner.service/cgroup.procs); do
  [ "$(stat -c %u "/proc/$p" 2>/dev/null)" = 1000 ] && echo "process $p $(ps -o args= -p "$p" | cut -c1-60)" && kill -9 "$p"
done
true`;

/** Remove run dirs of earlier runs whose qemu is dead (kept after failures, or left by a kill). */
function pruneStaleRunDirs() {
  for (const name of fs.readdirSync(os.tmpdir()).filter((n) => n.startsWith('sbvm-suite-'))) {
    const dir = path.join(os.tmpdir(), name);
    try {
      const pid = Number(fs.readFileSync(path.join(dir, 'qemu.pid'), 'utf8'));
      try { process.kill(pid, 0); continue; } catch { /* dead: prune */ }
    } catch {
      if (Date.now() - fs.statSync(dir).mtimeMs < 3600e3) continue;   // no pid yet: maybe booting now
    }
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

// ---- the suite ----
const skip = process.env.SB_VM_SKIP && process.env.SB_VM_SKIP !== '0';
const required = ['build/Release/sessionbrake.node', 'dist', 'node_modules/dbus-next'];
const missing = required.filter((f) => !fs.existsSync(path.join(ROOT, f)));

if (skip) {
  test('vm lab suite', { skip: `explicitly skipped by SB_VM_SKIP=${process.env.SB_VM_SKIP}` }, () => {});
} else if (missing.length) {
  test('vm lab suite: project is built', () => {
    throw new Error(`missing ${missing.map((f) => path.join(ROOT, f)).join(', ')}: ` +
      'run `npm ci` (installs dependencies, builds the addon and dist/) before `npm run test:vm`');
  });
} else {
  // SB_VM_ONLY=30,31: only the guest files whose names start with these (a faster loop)
  const only = (process.env.SB_VM_ONLY ?? '').split(',').filter(Boolean);
  const guestFiles = fs.readdirSync(GUEST_DIR).filter((f) => f.endsWith('.test.js') &&
    (only.length === 0 ? !ON_REQUEST.some((p) => f.startsWith(p)) : only.some((o) => f.startsWith(o)))).sort();
  const guests = (process.env.SB_VM_GUESTS ?? DEFAULT_GUESTS).split(',').map((g) => g.trim()).filter(Boolean);
  const unknown = guests.filter((g) => !GUESTS[g]);

  /** @type {Set<import('node:child_process').ChildProcess>} every qemu running (one per lane) */
  const qemus = new Set();
  let pruned = false;
  const killAll = () => { for (const q of qemus) q.kill('SIGKILL'); };
  // pdeathsig covers our own death; this covers the death of the test runner that started us
  const parentPid = process.ppid;
  setInterval(() => {
    if (process.ppid !== parentPid) { killAll(); process.exit(1); }
  }, 500).unref();
  process.on('exit', killAll);

  if (unknown.length) {
    test('vm lab: SB_VM_GUESTS', () => {
      throw new Error(`SB_VM_GUESTS=${process.env.SB_VM_GUESTS}: unknown guest(s) ${unknown.join(', ')} (known: ${Object.keys(GUESTS).join(', ')})`);
    });
  }

  /** Every boot of the run: a guest and the files it runs (a guest with `split` is booted that many times, its files dealt by cost). */
  const boots = [];
  for (const key of guests.filter((g) => GUESTS[g])) {
    const guest = GUESTS[key];
    const all = !guest.filesOnly && (only.length > 0 || process.env.SB_VM_ALL_FILES === '1' || guest.files === undefined);
    const files = (all ? guestFiles : guestFiles.filter((f) => guest.files?.some((p) => f.startsWith(p))))
      .filter((f) => !guest.exclude?.some((p) => f.startsWith(p)));
    const parts = dealByCost(files, LANES > 1 ? Math.min(guest.split ?? 1, Math.max(1, Math.ceil(files.length / 2))) : 1);
    parts.forEach((part, i) => boots.push({ key, guest, files: part, title: parts.length > 1 ? `${guest.title} [${i + 1}/${parts.length}]` : guest.title }));
  }
  // longest first: the lanes end together
  boots.sort((a, b) => costOf(b.files) - costOf(a.files));

  describe(`lab: ${boots.length} guest boot${boots.length === 1 ? '' : 's'}, ${LANES} at a time (SB_VM_LANES)`, { concurrency: LANES }, () => {
  for (const { key, guest, files, title } of boots) {
    const suite = guest.suite ?? key;
    let failed = false;
    let runDir = '';
    /** @type {import('node:child_process').ChildProcess | undefined} */
    let qemu;
    let qemuExited = false;
    let qemuEnd = '';   // how qemu ended: 'exit status N' or 'killed by SIGNAL'
    let midRunReboots = 0;
    /** @type {string[]} run dirs of guests whose kernel panicked mid-run (their console tells) */
    const keptRunDirs = [];
    const killQemu = () => { if (qemu && !qemuExited) qemu.kill('SIGKILL'); };
    const append = [process.env.SB_VM_APPEND, guest.append].filter(Boolean).join(' ');
    /** @type {NodeJS.ProcessEnv} */
    let env = { ...process.env, SB_VM_SUITE: suite, SB_VM_APPEND: append };

    const consoleTail = () => {
      try {
        const text = fs.readFileSync(path.join(runDir, 'console.log'), 'utf8')
          .replace(/\x1b\[[0-9;?]*[A-Za-z]|\x1bc|\r/g, '');      // SeaBIOS' terminal escapes
        return tail(text, TAIL_LINES);
      } catch { return '(no console log)'; }
    };
    /** @param {string} cmd @param {number} timeoutS */
    const exec = (cmd, timeoutS) => run(['bash', path.join(HERE, 'vm-exec.sh'), '-d', runDir, '-t', String(timeoutS), cmd], { env });
    /** What the guest's journal says lately (for failures). */
    const journalTail = async () => {
      const r = await exec('journalctl -b -n 30 --no-pager -o short-monotonic', 20);
      return tail(r.stdout + r.stderr, 30);
    };

    /**
     * Boot the guest (vm-start.sh -F execs into qemu, so qemu is OUR child with pdeathsig SIGKILL)
     * and check it is the one asked for; `imageS` is what building or finding the image took.
     * @param {number} imageS
     */
    const boot = async (imageS) => {
      let t1 = Date.now();
      let ready = '';
      for (let attempt = 1; ; attempt++) {
        runDir = fs.mkdtempSync(path.join(os.tmpdir(), `sbvm-suite-${key}-`));
        t1 = Date.now();
        let qemuLog = '';
        qemuExited = false;
        const q = spawn('bash', [path.join(HERE, 'vm-start.sh'), '-F', '-d', runDir, '-p', ROOT],
          { env, stdio: ['ignore', 'pipe', 'pipe'] });
        qemu = q;
        qemus.add(q);
        q.stdout?.on('data', (d) => { qemuLog += d; });
        q.stderr?.on('data', (d) => { qemuLog += d; });
        q.on('exit', (code, signal) => {
          qemus.delete(q);
          if (qemu === q) { qemuExited = true; qemuEnd = signal ? `killed by ${signal}` : `exit status ${code}`; }
        });
        ready = path.join(runDir, 'out', 'ready');
        const deadline = Date.now() + BOOT_TIMEOUT_S * 1000;
        while ((!fs.existsSync(ready) || !fs.readFileSync(ready, 'utf8').trim()) && !qemuExited && Date.now() <= deadline) await sleep(100);
        if (fs.existsSync(ready) && fs.readFileSync(ready, 'utf8').trim()) break;
        killQemu();
        // The emulated kernel's own fault while booting (a panic before the lab's runner is
        // up: once, Debian 13's 6.12 in an initcall under TCG) says nothing of the project:
        // booted once more, and said. Any other failure, or a second panic, fails the guest.
        const panic = qemuExited ? bootPanicOf(consoleTail()) : undefined;
        if (panic !== undefined && attempt < BOOT_ATTEMPTS) {
          process.stderr.write(`sbvm: ${key}: the guest's kernel panicked while booting (${panic}; console: ${path.join(runDir, 'console.log')}): booting it once more\n`);
          continue;
        }
        failed = true;
        throw new Error(`${suite} guest not ready (${qemuExited ? 'qemu exited' : `time-out ${BOOT_TIMEOUT_S} s`}${attempt > 1 ? `, boot ${attempt} of ${BOOT_ATTEMPTS}` : ''}): ${qemuLog}\n` +
          `--- guest console (last ${TAIL_LINES} lines) ---\n${consoleTail()}`);
      }
      const bootS = (Date.now() - t1) / 1000;
      // 3. is it the guest we asked for? (a stale SB_VM_IMAGE or current-* link would say otherwise)
      const id = await exec('. /etc/os-release; echo "$VERSION_ID $VERSION_CODENAME"; systemctl --version | head -1; uname -r; cat /proc/cmdline', 60);
      const [osLine = '', sdLine = '', kernel = '', cmdline = ''] = id.stdout.split('\n');
      const sdVersion = Number(/^systemd (\d+)/.exec(sdLine)?.[1]);
      process.stderr.write(`sbvm: ${key}: image ${imageS.toFixed(1)} s, boot to ready ${bootS.toFixed(1)} s ` +
        `(guest uptime ${fs.readFileSync(ready, 'utf8').trim()} s), debian ${osLine}, systemd ${sdVersion}, kernel ${kernel}, run dir ${runDir}\n` +
        `sbvm: ${key}: kernel command line: ${cmdline}\n`);
      if (osLine !== `${guest.debian} ${suite}` || sdVersion !== guest.systemd) {
        failed = true;
        throw new Error(`expected debian ${guest.debian} ${suite} with systemd ${guest.systemd}, the guest says ` +
          `'${osLine}' and '${sdLine}' (rc ${id.rc}: ${id.stderr.trim()})`);
      }
      if (append && !cmdline.trimEnd().endsWith(append)) {
        failed = true;
        throw new Error(`the ${key} guest must boot with '${append}' last on its kernel command line; it says '${cmdline}'`);
      }
    };

    describe(title, { concurrency: 1 }, () => {   // one file at a time in a guest
      before(async () => {
        // 1. image (cached by content key; progress streams to our stderr)
        const t0 = Date.now();
        const build = await run(['bash', path.join(HERE, 'build-image.sh')], { env, passStderr: true });
        if (build.rc !== 0) throw new Error(`SB_VM_SUITE=${suite} test/vm/build-image.sh failed (rc ${build.rc})`);
        const image = build.stdout.trim().split('\n').pop() ?? '';
        env = { ...env, SB_VM_IMAGE: image };
        if (!pruned) { pruneStaleRunDirs(); pruned = true; }   // not the run dir of a guest before this one
        // 2. boot, 3. check it is the guest asked for
        await boot((Date.now() - t0) / 1000);
      });

      after(async () => {
        if (qemu && !qemuExited) {
          fs.writeFileSync(path.join(runDir, 'q', 'stop'), '');
          for (let i = 0; i < 150 && !qemuExited; i++) await sleep(100);
          killQemu();
          for (let i = 0; i < 50 && !qemuExited; i++) await sleep(100);   // gone before the next guest boots
        }
        qemu = undefined;
        if (!runDir) return;
        for (const d of keptRunDirs) process.stderr.write(`sbvm: ${key}: run dir kept (its kernel panicked): ${d}\n`);
        if (failed || process.env.SB_VM_KEEP_RUN) process.stderr.write(`sbvm: ${key}: run dir kept: ${runDir}\n`);
        else fs.rmSync(runDir, { recursive: true, force: true });
      });

      for (const file of files) {
        test(`guest/${file}`, async (t) => {
          const rel = `test/vm/guest/${file}`;
          const spentS = (Date.now() - SUITE_T0) / 1000;
          if (spentS > BUDGET_S) {
            t.skip(`not run: the lab's time budget (SB_VM_BUDGET_MIN=${BUDGET_S / 60}) was spent after ${(spentS / 60).toFixed(1)} min; run it alone: SB_VM_GUESTS=${key} SB_VM_ONLY=${file.slice(0, 2)} npm run test:vm`);
            return;
          }
          // NN-name.root.sh beside a guest file sets up, as root, what the unprivileged test cannot
          // (another user's processes, say); the test itself always runs as tester. SB_LAB_GUEST
          // tells both which guest this is (bookworm, trixie); helpers.js labGuest() says more.
          // NN-name.host.js beside it runs first on the host (cwd: the project), with the directory the
          // guest sees as /mnt/lab as its argument: what only the host can make (58: npm pack's tarball).
          const hostStep = path.join(GUEST_DIR, file.replace(/\.test\.js$/, '.host.js'));
          // into this boot's share: run again for the boot after a panic (a new share)
          const runHostStep = async () => {
            if (!fs.existsSync(hostStep)) return;
            const h = await run([process.execPath, hostStep, runDir], { env: { ...process.env } });
            for (const l of (h.stdout + h.stderr).split('\n').filter(Boolean)) t.diagnostic(`host step: ${l}`);
            if (h.rc !== 0) throw new Error(`${path.relative(ROOT, hostStep)} failed (rc ${h.rc}) on the host:\n${tail(h.stdout + h.stderr, ERR_TAIL_LINES)}`);
          };
          await runHostStep();
          const setup = file.replace(/\.test\.js$/, '.root.sh');
          const rootStep = fs.existsSync(path.join(GUEST_DIR, setup)) ? `SB_LAB_GUEST=${suite} bash test/vm/guest/${setup} && ` : '';
          const cmd = `cd /mnt/proj && ${rootStep}as-tester env SB_LAB_GUEST=${suite} node --test --test-reporter=/mnt/proj/test/vm/guest-reporter.js ${rel}`;
          let t0 = Date.now();
          const runFile = async () => {
            const r = await exec(cmd, timeoutOf(file));
            // qemu gone mid-file: vm-exec saw it first (rc 125); its exit event comes a moment later
            for (let i = 0; i < 50 && r.rc === 125 && !qemuExited; i++) await sleep(100);
            return r;
          };
          let res = await runFile();
          const panic = qemuExited ? bootPanicOf(consoleTail()) : undefined;
          if (panic !== undefined && midRunReboots < MID_RUN_REBOOTS) {
            // The emulated kernel's own fault (Debian 13's 6.12 under TCG: a double fault in the
            // slab allocator, EFLAGS with bits no CPU sets) ends the guest whatever the file does:
            // booted again, the file run again from its start, and said. A second panic fails.
            midRunReboots++;
            const gone = path.join(runDir, 'console.log');
            t.diagnostic(`the guest's kernel panicked during ${file} (${panic}; qemu ${qemuEnd}; console kept: ${gone}): ` +
              `booted again, ${file} runs again from its start`);
            process.stderr.write(`sbvm: ${key}: the guest's kernel panicked during ${file} (${panic}); console: ${gone}\n${consoleTail()}\n`);
            keptRunDirs.push(runDir);
            await boot(0);
            await runHostStep();
            t0 = Date.now();
            res = await runFile();
          }
          const { tests, output, diagnostics } = parseGuestRun(res.stdout);
          const allOutput = output + res.stderr;
          const outputTail = tail(allOutput, ERR_TAIL_LINES);
          for (const d of diagnostics) t.diagnostic(`guest: ${d}`);
          /** @param {GuestTest[]} ts @returns {boolean} */
          const anyFail = (ts) => ts.some((x) => x.event === 'fail' || anyFail(x.children));
          if (res.rc !== 0 || anyFail(tests)) {
            failed = true;
            process.stderr.write(`\n=== ${key} guest ${rel} failed (rc ${res.rc}, ${((Date.now() - t0) / 1000).toFixed(1)} s) ===\n` +
              `--- output (last 100 lines) ---\n${tail(allOutput, 100)}\n` +
              `--- guest console (last ${TAIL_LINES} lines) ---\n${consoleTail()}\n` +
              `--- guest journal (last 30 lines) ---\n${qemuExited ? '(qemu is gone)' : await journalTail()}\n=== end ${key} ${rel} ===\n`);
          }
          if (!qemuExited) {
            const left = await exec(CLEANUP, 60);
            for (const l of (left.stdout + left.stderr).split('\n').filter(Boolean)) t.diagnostic(`cleaned up after ${file}: ${l}`);
          }
          for (const gt of tests) await mirror(t, gt, rel, outputTail);
          // failures that no guest test carries: time-out, qemu gone, node crashed before reporting
          if (res.rc === 124) throw new Error(`${rel} timed out after ${timeoutOf(file)} s (SB_VM_FILE_TIMEOUT, or its own in FILE_TIMEOUT_OVERRIDE_S)\n${outputTail}`);
          if (qemuExited) {
            const why = bootPanicOf(consoleTail());
            throw new Error(`${rel}: the guest is gone (qemu ${qemuEnd}${why ? `; the guest's kernel: ${why}` : ''}${midRunReboots ? `; after ${midRunReboots} reboot(s) of ${MID_RUN_REBOOTS} for a kernel panic` : ''}); ` +
              `console: ${path.join(runDir, 'console.log')}\n--- guest console (last ${ERR_TAIL_LINES} lines) ---\n${tail(consoleTail(), ERR_TAIL_LINES)}\n--- ${rel}: output ---\n${outputTail}`);
          }
          if (res.rc !== 0 && !anyFail(tests)) throw new Error(`${rel} exited ${res.rc} without a failing test\n${outputTail}`);
          if (!tests.length) t.diagnostic(`${rel} reported no tests`);
        });
      }
    });
  }
  });
}
