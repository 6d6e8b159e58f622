// @ts-check
'use strict';
const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { FileWatch } = require('../../dist/native.js');
const { countFds, waitFor, sleep } = require('../support/proc.js');

/** A fresh directory with `n` empty files; returns their paths. */
function files(n) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sb-watch-'));
  return Array.from({ length: n }, (_, i) => {
    const f = path.join(dir, `f${i}`);
    fs.writeFileSync(f, '');
    return f;
  });
}

/** A watch that records its events. */
function recorder() {
  /** @type {Array<{path: string, kind: string}>} */
  const events = [];
  const watch = new FileWatch((e) => events.push(e));
  return { watch, events };
}

test('a modified file is reported with its path', async () => {
  const [f] = files(1);
  const { watch, events } = recorder();
  watch.add(f);
  assert.equal(watch.size, 1);
  fs.appendFileSync(f, 'x');
  await waitFor('a modified event', () => events.length > 0);
  assert.deepEqual(events, [{ path: f, kind: 'modified' }]);
  watch.close();
});

test('a file watched with attributes reports a touch (utimes only); without, a touch stays quiet', async () => {
  // A heartbeat renewed by `touch` changes only its times (IN_ATTRIB, no IN_MODIFY). Only the
  // files that need it ask for attributes: cgroup files stay on content changes.
  const [beat, plain] = files(2);
  const { watch, events } = recorder();
  watch.add(beat, { attributes: true });
  watch.add(plain);
  const later = new Date(Date.now() + 5000);
  fs.utimesSync(plain, later, later);
  fs.utimesSync(beat, later, later);
  await waitFor('a touch of the heartbeat', () => events.length > 0);
  await sleep(50);
  assert.deepEqual(events, [{ path: beat, kind: 'modified' }]);
  watch.close();
});

test('a bad options argument to add() is refused, naming it', () => {
  const [f] = files(1);
  const { watch } = recorder();
  // @ts-expect-error: attributes must be a boolean
  assert.throws(() => watch.add(f, { attributes: 'yes' }), { name: 'TypeError', message: /attributes must be a boolean/ });
  watch.close();
});

test('a deleted file is reported gone once, and its watch is released', async () => {
  const [f] = files(1);
  const { watch, events } = recorder();
  watch.add(f);
  fs.unlinkSync(f);
  await waitFor('a gone event', () => events.some((e) => e.kind === 'gone'));
  await sleep(50);
  assert.deepEqual(events.filter((e) => e.kind === 'gone'), [{ path: f, kind: 'gone' }]);
  assert.equal(watch.size, 0);
  watch.close();
});

/** The kernel's watches on an inotify fd of this process (lines "inotify wd:..." of its fdinfo). */
function kernelWatches() {
  let n = 0;
  for (const fd of fs.readdirSync('/proc/self/fdinfo')) {
    try {
      n += fs.readFileSync(`/proc/self/fdinfo/${fd}`, 'utf8').split('\n').filter((l) => l.startsWith('inotify wd:')).length;
    } catch {
      /* gone meanwhile */
    }
  }
  return n;
}

test('a directory taken away under watched files makes each of them gone (the cgroup-removal path)', async () => {
  // Moving a directory sends nothing to watches on the files inside (as removing a cgroup does
  // on kernel 6.1): only the directory's parent hears of it.
  const [f, g] = files(2);
  const dir = path.dirname(f);
  const { watch, events } = recorder();
  watch.add(f);
  watch.add(g);
  fs.renameSync(dir, `${dir}-moved`);
  await waitFor('gone events', () => events.filter((e) => e.kind === 'gone').length === 2);
  assert.deepEqual(events.map((e) => e.path).sort(), [f, g].sort());
  assert.equal(watch.size, 0);
  watch.close();
});

test('the parent directories are watched once each, and released with their last file', () => {
  const parent = fs.mkdtempSync(path.join(os.tmpdir(), 'sb-slice-'));
  const paths = Array.from({ length: 10 }, (_, i) => {
    fs.mkdirSync(path.join(parent, `s${i}.scope`));
    const file = path.join(parent, `s${i}.scope`, 'memory.events.local');
    fs.writeFileSync(file, '');
    return file;
  });
  const before = kernelWatches();
  const watch = new FileWatch(() => {});
  for (const p of paths) watch.add(p);
  assert.equal(kernelWatches() - before, 11, '10 files and their one shared grandparent');
  for (const p of paths.slice(0, 9)) watch.remove(p);
  assert.equal(kernelWatches() - before, 2);
  watch.remove(paths[9]);
  assert.equal(kernelWatches() - before, 0);
  watch.close();
});

test('10,000 rapid writes yield a bounded number of callbacks', async () => {
  const [f, g] = files(2);
  const { watch, events } = recorder();
  watch.add(f);
  watch.add(g);
  const fd = fs.openSync(f, 'a');
  for (let i = 0; i < 10_000; i++) {
    fs.writeSync(fd, 'x');
    if (i % 2500 === 0) fs.appendFileSync(g, 'y');
  }
  fs.closeSync(fd);
  await waitFor('the burst to be reported', () => events.some((e) => e.path === f));
  await sleep(100);
  const forF = events.filter((e) => e.path === f).length;
  const forG = events.filter((e) => e.path === g).length;
  // All writes happen within one loop turn: one callback per file is the ideal; the kernel
  // may split its queue, so allow a few, never anything near one per write.
  assert.ok(forF >= 1 && forF <= 3, `callbacks for the busy file: ${forF}`);
  assert.ok(forG >= 1 && forG <= 3, `callbacks for the second file: ${forG}`);
  watch.close();
});

test('1,000 watches opened and closed leave no fd behind', () => {
  const paths = files(10);
  const before = countFds();
  for (let i = 0; i < 1000; i++) {
    const w = new FileWatch(() => {});
    w.add(paths[i % paths.length]);
    w.close();
  }
  const many = new FileWatch(() => {});
  for (const p of paths) many.add(p);
  assert.equal(countFds(), before + 1, 'one inotify fd serves many files');
  many.close();
  assert.equal(countFds(), before);
});

test('a removed file is no longer reported; removing twice says false', async () => {
  const [f, g] = files(2);
  const { watch, events } = recorder();
  watch.add(f);
  watch.add(g);
  assert.equal(watch.remove(f), true);
  assert.equal(watch.remove(f), false);
  fs.appendFileSync(f, 'x');
  fs.appendFileSync(g, 'x');
  await waitFor('the other file', () => events.length > 0);
  await sleep(50);
  assert.deepEqual(events, [{ path: g, kind: 'modified' }]);
  watch.close();
});

test('watching a missing file fails naming the syscall, the errno and the path', () => {
  const { watch } = recorder();
  const missing = path.join(os.tmpdir(), 'sb-no-such-dir', 'memory.events');
  assert.throws(() => watch.add(missing), {
    code: 'ENOENT',
    syscall: 'inotify_add_watch',
    path: missing,
    message: `inotify_add_watch ${missing}: No such file or directory (ENOENT)`,
  });
  watch.close();
});

test('a closed watch never calls back', async () => {
  const [f] = files(1);
  const { watch, events } = recorder();
  watch.add(f);
  fs.appendFileSync(f, 'x');
  watch.close(); // the event is queued in the kernel; it must not arrive
  assert.throws(() => watch.add(f), { code: 'EBADF' });
  await sleep(50);
  assert.deepEqual(events, []);
});

test('an exception thrown by the callback surfaces as an uncaught exception', async () => {
  const { spawnSync } = require('node:child_process');
  const [f] = files(1);
  const script = `
    const { FileWatch } = require(${JSON.stringify(require.resolve('../../dist/native.js'))});
    process.on('uncaughtException', (e) => { console.log('uncaught:' + e.message); process.exit(0); });
    setTimeout(() => process.exit(3), 5000);
    const w = new FileWatch(() => { throw new Error('boom'); });
    w.add(${JSON.stringify(f)});
    require('node:fs').appendFileSync(${JSON.stringify(f)}, 'x');
  `;
  const r = spawnSync(process.execPath, ['-e', script], { encoding: 'utf8', timeout: 10000 });
  assert.match(r.stdout, /uncaught:boom\n/);
});

test('a directory watched for its entries tells each that comes or goes by its own path', async () => {
  // A monitor of a file that does not exist yet watches its directory: creation, a rename into
  // place, deletion and a move out are each told under the entry's path; the directory's own end
  // is its gone.
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sb-watch-entries-'));
  const { watch, events } = recorder();
  watch.add(dir, { entries: true });
  const made = path.join(dir, 'made');
  fs.writeFileSync(made, 'x');
  await waitFor('the new entry', () => events.length > 0);
  assert.deepEqual(events.splice(0), [{ path: made, kind: 'modified' }]);
  const placed = path.join(dir, 'placed');
  fs.writeFileSync(path.join(os.tmpdir(), `sb-watch-tmp-${process.pid}`), 'y');
  fs.renameSync(path.join(os.tmpdir(), `sb-watch-tmp-${process.pid}`), placed);
  await waitFor('the entry moved in', () => events.length > 0);
  assert.deepEqual(events.splice(0), [{ path: placed, kind: 'modified' }]);
  fs.unlinkSync(made);
  await waitFor('the deleted entry', () => events.length > 0);
  assert.deepEqual(events.splice(0), [{ path: made, kind: 'gone' }]);
  fs.renameSync(placed, path.join(os.tmpdir(), `sb-watch-out-${process.pid}`));
  fs.rmSync(path.join(os.tmpdir(), `sb-watch-out-${process.pid}`));
  await waitFor('the entry moved out', () => events.length > 0);
  assert.deepEqual(events.splice(0), [{ path: placed, kind: 'gone' }]);
  assert.equal(watch.size, 1, 'the entries are not watched themselves');
  fs.rmdirSync(dir);
  await waitFor('the directory gone', () => events.length > 0);
  assert.deepEqual(events, [{ path: dir, kind: 'gone' }]);
  assert.equal(watch.size, 0);
  watch.close();
});

test('a directory watched for its entries that is also a watched file\'s grandparent keeps both', async () => {
  // The same directory is one inotify watch for both uses: its entries are still told, a file
  // below is still gone with its directory, and removing one use keeps the other working.
  const top = fs.mkdtempSync(path.join(os.tmpdir(), 'sb-watch-both-'));
  fs.mkdirSync(path.join(top, 'sub'));
  const deep = path.join(top, 'sub', 'deep');
  fs.writeFileSync(deep, '');
  const { watch, events } = recorder();
  watch.add(deep); // its grandparent is `top`
  watch.add(top, { entries: true });
  fs.writeFileSync(path.join(top, 'new'), '');
  await waitFor('the new entry', () => events.length > 0);
  assert.deepEqual(events.splice(0), [{ path: path.join(top, 'new'), kind: 'modified' }]);
  assert.equal(watch.remove(top), true);
  fs.appendFileSync(deep, 'x');
  await waitFor('the file below still watched', () => events.length > 0);
  assert.deepEqual(events.splice(0), [{ path: deep, kind: 'modified' }]);
  fs.renameSync(path.join(top, 'sub'), path.join(top, 'moved'));
  await waitFor('the file below gone with its directory', () => events.some((e) => e.path === deep));
  assert.deepEqual(events.filter((e) => e.path === deep), [{ path: deep, kind: 'gone' }]);
  assert.ok(!events.some((e) => e.path === path.join(top, 'sub')), 'entries are no longer told once removed');
  watch.close();
  fs.rmSync(top, { recursive: true, force: true });
});

test('a bad entries argument to add() is refused, naming it', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sb-watch-bad-'));
  const { watch } = recorder();
  // @ts-expect-error: entries must be a boolean
  assert.throws(() => watch.add(dir, { entries: 'yes' }), { name: 'TypeError', message: /entries must be a boolean/ });
  assert.throws(() => watch.add(path.join(dir, 'missing'), { entries: true }), /ENOENT/);
  watch.close();
});
