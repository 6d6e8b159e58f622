// @ts-check
'use strict';
// Issue 14, "installed like a real tool", as an operator does it on a server without network:
// - `npm start`'s link step (scripts/link-bins.js) against this checkout (the read-only 9p share):
//   sbctl and sbd linked into the bin directory, runnable by name, PATH advice said, a second run
//   changes nothing;
// - the tarball `npm pack` made on the host (58-install.host.js, in /mnt/lab/pack/) installed with
//   `npm install -g --offline --prefix ~/.local`: the addon built there by node-gyp (g++, make and
//   Node's headers from the image; no cmake-js, a devDependency), `sbctl install` points the unit at
//   the installed files (it pointed at the checkout before), and the sbd it starts answers and has
//   that addon mapped.
const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { spawnSync } = require('node:child_process');
const { labOnly, waitFor } = require('./helpers');
const { systemctl } = require('./sbd-helpers');

const proj = path.resolve(__dirname, '../../..');
const { version } = JSON.parse(fs.readFileSync(path.join(proj, 'package.json'), 'utf8'));
const home = os.homedir();
const prefix = path.join(home, '.local');
const pkgDir = path.join(prefix, 'lib/node_modules/sessionbrake');
const sbctlBin = path.join(prefix, 'bin/sbctl');
const run = (cmd, args, opts = {}) => spawnSync(cmd, args, { encoding: 'utf8', timeout: 120_000, ...opts });

test('npm start\'s link step: sbctl and sbd linked to the checkout, runnable by name, PATH advice said; a second run changes nothing', labOnly, (t) => {
  const scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'sb-link-'));
  t.after(() => fs.rmSync(scratch, { recursive: true, force: true }));
  const env = { ...process.env, HOME: scratch, SHELL: '/bin/bash', PATH: '/usr/local/bin:/usr/bin:/bin' };
  delete env.XDG_BIN_HOME;
  const first = run(process.execPath, [path.join(proj, 'scripts/link-bins.js')], { env });
  assert.equal(first.status, 0, first.stdout + first.stderr);
  assert.deepEqual(first.stdout.trim().split('\n'), [
    `start: linked ~/.local/bin/sbd -> ${proj}/dist/daemon/main.js`,
    `start: linked ~/.local/bin/sbctl -> ${proj}/dist/cli/main.js`,
    'start: ~/.local/bin is not on your PATH: add this line to ~/.profile, then log in again:',
    'start:   export PATH="$HOME/.local/bin:$PATH"',
  ]);
  // By name, through the link and the entry point's shebang (the build made it executable).
  const byName = run('sbctl', ['--version'], { env: { ...env, PATH: `${scratch}/.local/bin:${env.PATH}` } });
  assert.equal(byName.status, 0, byName.stderr);
  assert.equal(byName.stdout.trim(), version);
  const sbd = run('sbd', ['--version'], { env: { ...env, PATH: `${scratch}/.local/bin:${env.PATH}` } });
  assert.equal(sbd.stdout.trim(), version, sbd.stderr);

  const second = run(process.execPath, [path.join(proj, 'scripts/link-bins.js')], { env: { ...env, PATH: `${scratch}/.local/bin:${env.PATH}` } });
  assert.equal(second.status, 0, second.stderr);
  assert.deepEqual(second.stdout.trim().split('\n'), [
    `start: ~/.local/bin/sbd already links to ${proj}/dist/daemon/main.js`,
    `start: ~/.local/bin/sbctl already links to ${proj}/dist/cli/main.js`,
  ], 'on PATH now: no advice');
});

test('sbctl install from the checkout: the unit runs the checkout\'s sbd, and the output says that moving the checkout breaks it', labOnly, () => {
  const r = run(process.execPath, [path.join(proj, 'dist/cli/main.js'), 'install'], { timeout: 60_000 });
  assert.equal(r.status, 0, r.stdout + r.stderr);
  assert.match(r.stdout, new RegExp(`^sbd\\.service runs ${proj}/dist/daemon/main\\.js from the checkout ${proj}, with \\S+:\nmoving or removing this checkout breaks sbd`, 'm'));
  assert.match(fs.readFileSync(path.join(home, '.config/systemd/user/sbd.service'), 'utf8'), new RegExp(`^ExecStart=\\S+ ${proj}/dist/daemon/main\\.js$`, 'm'));
});

test('the packed tarball: npm install -g --offline builds the addon with node-gyp; sbctl install points the unit there; sbd runs it', labOnly, async (t) => {
  const dir = '/mnt/lab/pack';
  const tarball = fs.existsSync(dir) ? fs.readdirSync(dir).find((f) => f.endsWith('.tgz')) : undefined;
  assert.ok(tarball, `no tarball in ${dir}: the suite runs 58-install.host.js (npm pack) on the host first`);
  t.after(() => {
    run(sbctlBin, ['uninstall']);   // the other guest files install the checkout's unit anew
    fs.rmSync(pkgDir, { recursive: true, force: true });
    for (const c of ['sbctl', 'sbd']) fs.rmSync(path.join(prefix, 'bin', c), { force: true });
  });

  const t0 = Date.now();
  // Under TCG this is most of the file: npm itself about 100-150 s, node-gyp's compile about 170 s
  // (measured alone); 476 s beside another guest. The suite gives this file 1000 s (FILE_TIMEOUT_OVERRIDE_S).
  const install = run('npm', ['install', '-g', '--offline', '--prefix', prefix, path.join(dir, tarball)], { timeout: 840_000, cwd: home });
  const installS = (Date.now() - t0) / 1000;
  t.diagnostic(`npm install -g --offline of ${tarball}: ${installS.toFixed(1)} s (addon compiled by node-gyp under TCG)`);
  for (const l of install.stderr.split('\n').filter((x) => /warn/i.test(x))) t.diagnostic(`npm: ${l}`);
  assert.equal(install.status, 0, `npm install failed:\n${install.stdout}\n${install.stderr}`);

  // The addon was built here, by node-gyp (build/config.gypi), not by cmake-js; the exec gate beside it.
  assert.ok(fs.existsSync(path.join(pkgDir, 'build/config.gypi')), 'node-gyp\'s build directory');
  assert.equal(fs.existsSync(path.join(pkgDir, 'build/CMakeCache.txt')), false);
  assert.ok(fs.statSync(path.join(pkgDir, 'build/Release/sb-exec-gate')).mode & 0o111, 'the exec gate is built too');
  assert.equal(fs.existsSync(path.join(pkgDir, 'test')), false, 'no tests in the tarball');

  const v = run(sbctlBin, ['--version']);
  assert.equal(v.status, 0, v.stderr);
  assert.equal(v.stdout.trim(), version);
  const byName = run('sbctl', ['--version'], { env: { ...process.env, PATH: `${prefix}/bin:${process.env.PATH}` } });
  assert.equal(byName.stdout.trim(), version, `npm's own link, by name: ${byName.stderr}`);

  const inst = run(sbctlBin, ['install', '--now'], { timeout: 60_000 });
  assert.equal(inst.status, 0, inst.stdout + inst.stderr);
  assert.match(inst.stdout, new RegExp(`^sbd\\.service runs ${pkgDir}/dist/daemon/main\\.js \\(installed by npm\\) with `, 'm'));
  assert.doesNotMatch(inst.stdout, /checkout/);
  const unitFile = fs.readFileSync(path.join(home, '.config/systemd/user/sbd.service'), 'utf8');
  assert.match(unitFile, new RegExp(`^ExecStart=\\S+ ${pkgDir}/dist/daemon/main\\.js$`, 'm'));
  // And as systemd has loaded it.
  const exec = systemctl('show', 'sbd.service', '--property=ExecStart').stdout;
  assert.match(exec, new RegExp(`argv\\[\\]=\\S+ ${pkgDir}/dist/daemon/main\\.js ;`));

  await waitFor(() => run(sbctlBin, ['status', '--json']).status === 0, 60_000, { what: 'the installed sbd to answer sbctl status --json' });
  const status = JSON.parse(run(sbctlBin, ['status', '--json']).stdout);
  assert.ok(status && typeof status === 'object');
  const pid = Number(systemctl('show', 'sbd.service', '--property=MainPID', '--value').stdout.trim());
  assert.ok(pid > 0);
  const maps = fs.readFileSync(`/proc/${pid}/maps`, 'utf8');
  assert.ok(maps.includes(`${pkgDir}/build/Release/sessionbrake.node`), `sbd (pid ${pid}) has the installed addon mapped`);
  assert.equal(maps.includes('/mnt/proj/'), false, 'and nothing of the checkout');
  // sbd's first journal line names its entry point and the build of the addon it loaded.
  const starting = await waitFor(() => run('journalctl', ['--user', '-u', 'sbd.service', '--no-pager', '-o', 'cat', `_PID=${pid}`]).stdout
    .split('\n').map((l) => { try { return JSON.parse(l.replace(/^<\d>/, '')); } catch { return undefined; } })
    .find((e) => e?.event === 'starting'), 20_000, { what: 'sbd\'s starting line in its journal' });
  assert.equal(starting.entry, `${pkgDir}/dist/daemon/main.js`);
  assert.equal(starting.addon, `${pkgDir}/build/Release/sessionbrake.node`);
  assert.equal(starting.addonBuild, 'node-gyp');
});
