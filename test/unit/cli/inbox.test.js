// @ts-check
'use strict';
// Issue 13: `sbctl inbox`: the session from SESSIONBRAKE_SESSION, --since, --json, and --follow
// printing a new notice as it comes (inotify on the inbox file, the real addon, a real sbctl).
const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { spawn, spawnSync } = require('node:child_process');
const { appendNotice } = require('../../../dist/inbox/store.js');
const { formatNotice } = require('../../../dist/cli/inbox.js');

const SBCTL = path.join(__dirname, '../../../dist/cli/main.js');

/** A state home, removed after the test once every child given to `owns` has exited: a running
 * `--follow` puts its inbox file back when it is deleted, so removing the directory under it fails
 * with ENOTEMPTY (seen in CI). */
function home(t) {
  const state = fs.mkdtempSync(path.join(os.tmpdir(), 'sb-inboxcli-'));
  /** @type {import('node:child_process').ChildProcess[]} */
  const children = [];
  t.after(async () => {
    await Promise.all(children.map((c) => (c.exitCode !== null || c.signalCode !== null
      ? undefined
      : new Promise((r) => { c.once('close', r); c.kill('SIGKILL'); }))));
    fs.rmSync(state, { recursive: true, force: true });
  });
  const owns = (child) => { children.push(child); return child; };
  return { state, owns, dir: path.join(state, 'sessionbrake', 'inbox'), env: { ...process.env, XDG_STATE_HOME: state, SESSIONBRAKE_SESSION: 'fix' } };
}
const notice = (text) => ({ atMs: Date.UTC(2026, 11, 1, 3, 12), from: 'sbd', kind: 'stopped', text });

test('the session from SESSIONBRAKE_SESSION; --since; --json lines; no session said precisely (exit 2)', (t) => {
  const h = home(t);
  appendNotice(h.dir, 'fix', notice('first'));
  appendNotice(h.dir, 'fix', notice('second'));
  const r = spawnSync(process.execPath, [SBCTL, 'inbox', '--since', '1', '--json'], { env: h.env, encoding: 'utf8' });
  assert.equal(r.status, 0, r.stderr);
  assert.deepEqual(r.stdout.trim().split('\n').map((l) => JSON.parse(l).text), ['second']);
  const none = spawnSync(process.execPath, [SBCTL, 'inbox'], { env: { ...h.env, SESSIONBRAKE_SESSION: '' }, encoding: 'utf8' });
  assert.equal(none.status, 2);
  assert.match(none.stderr, /which session\? give --session NAME/);
});

test('a notice for people: id, time, from, kind, text, its lines and what was left out', () => {
  assert.equal(formatNotice({ id: 7, atMs: Date.UTC(2026, 11, 1, 3, 12), from: '0123abcd', kind: 'match', text: '2 lines matched', lines: ['ERROR a', 'ERROR b'], truncated: 1 }),
    '#7  2026-12-01 03:12:00  0123abcd  match: 2 lines matched\n    ERROR a\n    ERROR b\n    (1 more matching line left out)');
});

test('--follow prints a notice appended after it started, without polling', async (t) => {
  const h = home(t);
  appendNotice(h.dir, 'fix', notice('before'));
  const child = h.owns(spawn(process.execPath, [SBCTL, 'inbox', '--follow', '--json'], { env: h.env, stdio: ['ignore', 'pipe', 'pipe'] }));
  let out = '';
  child.stdout.on('data', (d) => { out += d; });
  const lines = () => out.trim().split('\n').filter(Boolean).map((l) => JSON.parse(l).text);
  const until = async (pred, what) => {
    for (let i = 0; i < 100 && !pred(); i++) await new Promise((r) => setTimeout(r, 100));
    assert.ok(pred(), `${what}; printed: ${out}`);
  };
  await until(() => lines().includes('before'), 'the earlier notice first');
  appendNotice(h.dir, 'fix', notice('after'));
  await until(() => lines().includes('after'), 'the new notice as it comes');
  assert.deepEqual(lines(), ['before', 'after']);
});
