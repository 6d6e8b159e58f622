// @ts-check
'use strict';
// The textfile for node_exporter (src/metrics/textfile.ts, start.ts): atomic writes on a real
// directory (a reader never sees a partial file), mode 0644 under sbd's umask, a name node_exporter
// does not read for the temporary file, and an unwritable directory warned about once, not fatal.
const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { spawn } = require('node:child_process');
const { writeTextfile, textfileProblem, tempName } = require('../../../dist/metrics/textfile.js');
const { startMetrics, textfileNameFor } = require('../../../dist/metrics/start.js');

function tmpdir(t) {
  const d = fs.mkdtempSync(path.join(os.tmpdir(), 'sb-textfile-'));
  t.after(() => fs.rmSync(d, { recursive: true, force: true }));
  return d;
}

/** A log that keeps what it is told. */
function recordingLog() {
  const lines = [];
  const at = (level) => (fields, msg) => lines.push({ level, ...fields, msg });
  return { lines, log: { info: at('info'), warn: at('warn'), error: at('error'), debug: at('debug') } };
}

test('a reader never sees a partial file: another process reads it in a loop while it is rewritten 300 times, sizes 1 KiB to 300 KiB', async (t) => {
  const dir = tmpdir(t);
  const name = 'sessionbrake-x.prom';
  // each version: a header naming its number and size, a body, and a trailer repeating both
  const version = (n) => {
    const body = 'y'.repeat(1024 * (1 + ((n * 37) % 300)));
    return `# v ${n} ${body.length}\n${body}\n# end ${n} ${body.length}\n`;
  };
  writeTextfile(dir, name, version(0));
  const reader = spawn(process.execPath, ['-e', `
    const fs = require('node:fs');
    const file = ${JSON.stringify(path.join(dir, name))};
    let reads = 0, bad = 0;
    const deadline = Date.now() + 60000;
    while (!fs.existsSync(file + '.stop') && Date.now() < deadline) {
      const t = fs.readFileSync(file, 'utf8');
      const m = /^# v (\\d+) (\\d+)\\n/.exec(t);
      const ok = m && t.length === m[0].length + Number(m[2]) + 1 + ('# end ' + m[1] + ' ' + m[2] + '\\n').length && t.endsWith('# end ' + m[1] + ' ' + m[2] + '\\n');
      reads++;
      if (!ok) bad++;
    }
    process.stdout.write(JSON.stringify({ reads, bad }));
  `], { stdio: ['ignore', 'pipe', 'inherit'] });
  let out = '';
  reader.stdout.on('data', (d) => { out += d; });
  for (let n = 1; n <= 300; n++) {
    writeTextfile(dir, name, version(n));
    if (n % 20 === 0) await new Promise((r) => setImmediate(r));
  }
  fs.writeFileSync(path.join(dir, `${name}.stop`), '');
  await new Promise((r) => reader.on('close', r));
  const { reads, bad } = JSON.parse(out);
  assert.ok(reads > 50, `the reader read ${reads} times`);
  assert.equal(bad, 0, `${bad} of ${reads} reads saw a partial file`);
  assert.equal(fs.readFileSync(path.join(dir, name), 'utf8'), version(300));
  assert.deepEqual(fs.readdirSync(dir).filter((f) => f.endsWith('.tmp')), [], 'no temporary file left');
});

test('mode 0644 under a umask of 077 (sbd\'s unit), and the temporary file is hidden and not *.prom', (t) => {
  const dir = tmpdir(t);
  const old = process.umask(0o077);
  try {
    writeTextfile(dir, 'a.prom', 'x 1\n');
  } finally {
    process.umask(old);
  }
  assert.equal(fs.statSync(path.join(dir, 'a.prom')).mode & 0o777, 0o644);
  assert.match(tempName('a.prom', 12), /^\.a\.prom\.12\.tmp$/);
  assert.ok(!tempName('a.prom').endsWith('.prom'), 'node_exporter reads *.prom only');
});

test('the file name: as configured, else one per user (users share node_exporter\'s one directory)', () => {
  assert.equal(textfileNameFor(undefined, 'alice'), 'sessionbrake-alice.prom');
  assert.equal(textfileNameFor('x.prom', 'alice'), 'x.prom');
});

test('why it cannot be written names the directory and the fix', () => {
  const err = (code) => Object.assign(new Error(code), { code });
  assert.match(textfileProblem(err('ENOENT'), '/var/lib/ne', 'f.prom', 'alice'), /^metrics\.textfileDirectory \/var\/lib\/ne does not exist: create it .*--collector\.textfile\.directory.* let alice write to it/);
  assert.match(textfileProblem(err('EACCES'), '/var/lib/ne', 'f.prom', 'alice'), /^metrics\.textfileDirectory \/var\/lib\/ne is not writable by alice .*chgrp sessionbrake \/var\/lib\/ne && chmod 1775 \/var\/lib\/ne/);
  assert.match(textfileProblem(err('ENOTDIR'), '/etc/passwd', 'f.prom', 'alice'), /is not a directory/);
  assert.match(textfileProblem(err('EIO'), '/d', 'f.prom', 'alice'), /^cannot write \/d\/f\.prom: EIO EIO; sbd goes on without its textfile$/);
});

test('a missing directory: one warning naming it and the fix, sbd goes on; once it exists the file is written and that is said', async (t) => {
  const parent = tmpdir(t);
  const dir = path.join(parent, 'textfile');
  const { lines, log } = recordingLog();
  const m = startMetrics({ config: { textfileDirectory: dir, perSession: false }, version: '1', graceS: 1, slices: [], view: () => ({ sessions: [], monitors: [] }), log, user: 'alice' });
  t.after(() => m.close());
  await m.ready;
  for (let i = 0; i < 3; i++) {
    m.changed();
    await new Promise((r) => setTimeout(r, 1100)); // past the debounce: written (or tried) again
  }
  const warnings = lines.filter((l) => l.level === 'warn');
  assert.equal(warnings.length, 1, `warned once, not at each try: ${JSON.stringify(warnings)}`);
  assert.equal(warnings[0].event, 'metrics-textfile-not-written');
  assert.match(warnings[0].msg, new RegExp(`${dir} does not exist: create it`));
  fs.mkdirSync(dir);
  m.changed();
  await new Promise((r) => setTimeout(r, 1200));
  const text = fs.readFileSync(path.join(dir, 'sessionbrake-alice.prom'), 'utf8');
  assert.match(text, /^sessionbrake_textfile_writes_total\{user="alice"\} 0$/m, 'the count before this write');
  assert.ok(lines.some((l) => l.event === 'metrics-textfile-ok'), 'said that it is written again');
});

test('an unwritable directory (no write bit): warned, naming it and the fix, not thrown (as an unprivileged user: root writes anywhere)', async (t) => {
  const dir = tmpdir(t);
  fs.chmodSync(dir, 0o555);
  const script = `
    const { startMetrics } = require(${JSON.stringify(path.resolve(__dirname, '../../../dist/metrics/start.js'))});
    const lines = [];
    const at = (level) => (fields, msg) => lines.push({ level, ...fields, msg });
    const m = startMetrics({ config: { textfileDirectory: ${JSON.stringify(dir)}, perSession: false }, version: '1', graceS: 1, slices: [], view: () => ({ sessions: [], monitors: [] }), log: { info: at('info'), warn: at('warn'), error: at('error'), debug: at('debug') }, user: 'alice' });
    m.ready.then(() => { m.close(); process.stdout.write(JSON.stringify(lines)); });`;
  // root writes anywhere: the check runs as nobody then
  const asNobody = process.getuid?.() === 0 ? { uid: 65534, gid: 65534 } : {};
  const r = require('node:child_process').spawnSync(process.execPath, ['-e', script], { encoding: 'utf8', ...asNobody });
  assert.equal(r.status, 0, `sbd's metrics went on: ${r.stderr}`);
  const warnings = JSON.parse(r.stdout).filter((l) => l.level === 'warn');
  assert.equal(warnings.length, 1);
  assert.match(warnings[0].msg, new RegExp(`${dir} is not writable by alice`));
});

test('a path that is not a directory: warned, not thrown', async (t) => {
  const parent = tmpdir(t);
  const notDir = path.join(parent, 'plain-file');
  fs.writeFileSync(notDir, '');
  const { lines, log } = recordingLog();
  const m = startMetrics({ config: { textfileDirectory: notDir, perSession: false }, version: '1', graceS: 1, slices: [], view: () => ({ sessions: [], monitors: [] }), log, user: 'alice' });
  t.after(() => m.close());
  await m.ready;
  assert.match(lines.find((l) => l.level === 'warn')?.msg ?? '', /is not a directory/);
});

test('written at start and after a change; no timestamps; left in place when closed', async (t) => {
  const dir = tmpdir(t);
  const { log } = recordingLog();
  let sessions = [];
  const m = startMetrics({ config: { textfileDirectory: dir, textfileName: 'sb.prom', perSession: false }, version: '1', graceS: 1, slices: ['s.slice'], view: () => ({ sessions, monitors: [] }), log, user: 'bob' });
  await m.ready;
  const file = path.join(dir, 'sb.prom');
  assert.match(fs.readFileSync(file, 'utf8'), /^sessionbrake_sessions\{state="ok",slice="s\.slice",user="bob"\} 0$/m);
  sessions = [{ name: 'a', slice: 's.slice', state: 'ok', feed: 'psi', standingStillS: undefined, memoryHighBytes: 1 }];
  m.changed();
  await new Promise((r) => setTimeout(r, 1300));
  const text = fs.readFileSync(file, 'utf8');
  assert.match(text, /^sessionbrake_sessions\{state="ok",slice="s\.slice",user="bob"\} 1$/m, 'rewritten within the debounce');
  for (const l of text.split('\n').filter((x) => x && !x.startsWith('#'))) assert.equal(l.split(' ').length, 2, `no timestamp: ${l}`);
  m.close();
  assert.ok(fs.existsSync(file), 'left for node_textfile_mtime_seconds to show its age');
});
