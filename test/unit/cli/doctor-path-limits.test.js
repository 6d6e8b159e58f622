// @ts-check
'use strict';
// Issue 14/15: sbctl doctor says whether sbctl and sbd are usable by name (and the one fix), and
// whether sbd has room in open files and inotify watches for a thousand more sessions. The real
// machine: guest 20 (doctor with and without the links on PATH, and sbd's own /proc).
const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { pathCheck, sbdResourceChecks, parseOpenFilesLimit, countInotifyWatches, SESSIONS_OF_HEADROOM, FILES_PER_SESSION, WATCHES_PER_SESSION } = require('../../../dist/cli/doctor.js');

test('on PATH: both found is OK and says where', () => {
  const c = pathCheck({ sbctl: '/home/a/.local/bin/sbctl', sbd: '/home/a/.local/bin/sbd' }, '/usr/bin:/home/a/.local/bin', '/home/a/.local/bin', '/home/a');
  assert.deepEqual([c.ok, c.detail], [true, 'sbctl is /home/a/.local/bin/sbctl, sbd is /home/a/.local/bin/sbd']);
});

test('on PATH: linked into ~/.local/bin but that is not on PATH: the export is the fix', () => {
  const home = fs.mkdtempSync(path.join(os.tmpdir(), 'sb-home-'));
  fs.mkdirSync(path.join(home, '.local', 'bin'), { recursive: true });
  for (const n of ['sbctl', 'sbd']) fs.symlinkSync('/bin/true', path.join(home, '.local', 'bin', n));
  const c = pathCheck({ sbctl: undefined, sbd: undefined }, '/usr/bin:/bin', path.join(home, '.local', 'bin'), home);
  assert.equal(c.ok, false);
  assert.match(c.detail, /^sbctl and sbd are in .*\.local\/bin, which is not on PATH$/);
  assert.match(c.fix ?? '', /export PATH="\$HOME\/\.local\/bin:\$PATH"/);
  // $XDG_BIN_HOME elsewhere: named as it is
  const other = fs.mkdtempSync(path.join(os.tmpdir(), 'sb-xdgbin-'));
  for (const n of ['sbctl', 'sbd']) fs.symlinkSync('/bin/true', path.join(other, n));
  const x = pathCheck({ sbctl: undefined, sbd: undefined }, '/usr/bin', other, home);
  assert.match(x.detail, new RegExp(`are in ${other}, which is not on PATH`));
  assert.match(x.fix ?? '', new RegExp(`export PATH="${other}:\\$PATH"`));
  fs.rmSync(other, { recursive: true, force: true });
  fs.rmSync(home, { recursive: true, force: true });
});

test('on PATH: not linked at all: npm start or the packed install is the fix', () => {
  const c = pathCheck({ sbctl: '/usr/local/bin/sbctl', sbd: undefined }, '/usr/local/bin', '/nonexistent-home/.local/bin', '/nonexistent-home');
  assert.equal(c.ok, false);
  assert.equal(c.detail, 'sbd not found on PATH');
  assert.match(c.fix ?? '', /npm start.*into \/nonexistent-home\/\.local\/bin/);
  assert.match(c.fix ?? '', /npm install -g --prefix ~\/\.local/);
});

test('open files: the soft limit of /proc/PID/limits; unlimited and garbage handled', () => {
  const limits = 'Limit                     Soft Limit           Hard Limit           Units     \nMax cpu time              unlimited            unlimited            seconds   \nMax open files            1024                 524288               files     \n';
  assert.equal(parseOpenFilesLimit(limits), 1024);
  assert.equal(parseOpenFilesLimit(limits.replace('1024 ', 'unlimited ')), Number.MAX_SAFE_INTEGER);
  assert.equal(parseOpenFilesLimit('Max open files            lots'), undefined);
  assert.equal(parseOpenFilesLimit(''), undefined);
});

test('inotify watches: one `inotify wd:` line each in fdinfo', () => {
  const fdinfo = 'pos:\t0\nflags:\t02004000\nmnt_id:\t15\nino:\t1057\ninotify wd:2 ino:1a sdev:1a mask:2 ignored_mask:0 fhandle-bytes:8 fhandle-type:1 f_handle:1a00\ninotify wd:1 ino:9 sdev:1a mask:2 ignored_mask:0 fhandle-bytes:8 fhandle-type:1 f_handle:0900\n';
  assert.equal(countInotifyWatches(fdinfo), 2);
  assert.equal(countInotifyWatches('pos:\t0\nflags:\t02\n'), 0);
});

test('room for a thousand more sessions: OK with it, FAIL with the fix without it', () => {
  const roomy = sbdResourceChecks({ pid: 7, openFilesLimit: 524288, openFiles: 40, inotifyWatches: 30, maxUserWatches: 65536 });
  assert.deepEqual(roomy.map((c) => [c.name, c.ok]), [['open files', true], ['inotify watches', true]]);
  assert.match(roomy[0].detail, /sbd \(pid 7\) holds 40 of 524288 open files/);
  const tight = sbdResourceChecks({ pid: 7, openFilesLimit: 1024, openFiles: 40, inotifyWatches: 7000, maxUserWatches: 8192 });
  assert.deepEqual(tight.map((c) => c.ok), [false, false]);
  assert.match(tight[0].fix ?? '', /LimitNOFILE=65536/);
  assert.match(tight[1].fix ?? '', /fs\.inotify\.max_user_watches=524288/);
  // the edge: exactly the files and watches of SESSIONS_OF_HEADROOM sessions left is enough
  assert.equal(FILES_PER_SESSION, 3, 'a PSI trigger, a pidfd and the agent\'s stat');
  assert.equal(WATCHES_PER_SESSION, 3, 'memory.events.local, cgroup.events, the heartbeat');
  assert.equal(sbdResourceChecks({ pid: 1, openFilesLimit: 40 + 3 * SESSIONS_OF_HEADROOM, openFiles: 40, inotifyWatches: 0, maxUserWatches: 1e6 })[0].ok, true);
  assert.equal(sbdResourceChecks({ pid: 1, openFilesLimit: 39 + 3 * SESSIONS_OF_HEADROOM, openFiles: 40, inotifyWatches: 0, maxUserWatches: 1e6 })[0].ok, false);
  assert.equal(sbdResourceChecks({ pid: 1, openFilesLimit: 1e6, openFiles: 40, inotifyWatches: 100, maxUserWatches: 100 + 3 * SESSIONS_OF_HEADROOM })[1].ok, true);
  assert.equal(sbdResourceChecks({ pid: 1, openFilesLimit: 1e6, openFiles: 40, inotifyWatches: 101, maxUserWatches: 100 + 3 * SESSIONS_OF_HEADROOM })[1].ok, false);
  const counted = sbdResourceChecks({ pid: 7, openFilesLimit: 524288, openFiles: 4040, inotifyWatches: 6000, maxUserWatches: 65536, inotifyInstances: 1, maxUserInstances: 128 });
  assert.match(counted[0].detail, /4040 of 524288 open files \(3 per session: its PSI trigger, its agent's pidfd and \/proc stat; room for 173416 more sessions\)/);
  assert.match(counted[1].detail, /6000 of the 65536 .*room for 19845 more sessions.*, on 1 inotify instance of the 128 a user may have$/);
  const unread = sbdResourceChecks({ pid: 1, openFilesLimit: undefined, openFiles: 3, inotifyWatches: 0, maxUserWatches: undefined });
  assert.deepEqual(unread.map((c) => c.ok), [true, true]);
  assert.match(unread[0].detail, /could not be read/);
});
