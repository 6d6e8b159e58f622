// @ts-check
'use strict';
// Issue 14: `npm start` links sbctl and sbd into ~/.local/bin. The decision is pure (decideLink);
// the rest is the same decision carried out on real files in a scratch home: a file or another
// program's link is never overwritten, a link to a copy that is gone is replaced, and a second
// run changes nothing.
const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { decideLink, inspectPlace, linkCommands, describeLink } = require('../../../dist/install/bin-links.js');

const ENTRY = '/home/ann/src/sessionbrake/dist/cli/main.js';

test('decideLink: nothing there -> create; already this entry point -> keep', () => {
  assert.deepEqual(decideLink({ kind: 'absent' }, ENTRY), { action: 'create' });
  assert.deepEqual(decideLink({ kind: 'link', target: ENTRY, real: ENTRY, sessionbrake: true }, ENTRY), { action: 'keep' });
});

test('decideLink: a file, a directory or another program\'s link is left alone, and said why', () => {
  assert.deepEqual(decideLink({ kind: 'other', what: 'file' }, ENTRY), { action: 'skip', why: 'a file, not sessionbrake\'s link' });
  assert.deepEqual(decideLink({ kind: 'other', what: 'directory' }, ENTRY), { action: 'skip', why: 'a directory, not sessionbrake\'s link' });
  assert.deepEqual(decideLink({ kind: 'link', target: '/usr/bin/sbctl-other', real: '/usr/bin/sbctl-other', sessionbrake: false }, ENTRY),
    { action: 'skip', why: 'a link to /usr/bin/sbctl-other, not to sessionbrake' });
  assert.deepEqual(decideLink({ kind: 'link', target: '/opt/gone/sbctl', real: undefined, sessionbrake: false }, ENTRY),
    { action: 'skip', why: 'a link to /opt/gone/sbctl (dangling), not to sessionbrake' });
});

test('decideLink: sessionbrake\'s own link to a moved checkout (stale) or to another copy is replaced', () => {
  assert.deepEqual(decideLink({ kind: 'link', target: '/old/place/dist/cli/main.js', real: undefined, sessionbrake: true }, ENTRY),
    { action: 'replace', was: '/old/place/dist/cli/main.js', why: 'stale' });
  const npmCopy = '/home/ann/.local/lib/node_modules/sessionbrake/dist/cli/main.js';
  assert.deepEqual(decideLink({ kind: 'link', target: npmCopy, real: npmCopy, sessionbrake: true }, ENTRY),
    { action: 'replace', was: npmCopy, why: 'other-copy' });
});

/** A scratch package named `name` with a bin entry point, as a checkout has it (mode 0644, as tsc writes). */
function scratchPackage(dir, name = 'sessionbrake') {
  fs.mkdirSync(path.join(dir, 'dist/cli'), { recursive: true });
  fs.writeFileSync(path.join(dir, 'package.json'), JSON.stringify({ name, bin: { sbctl: 'dist/cli/main.js' } }));
  fs.writeFileSync(path.join(dir, 'dist/cli/main.js'), '#!/usr/bin/env node\nconsole.log("hi")\n', { mode: 0o644 });
  return dir;
}

test('inspectPlace tells our links (live or dangling) from other things', (t) => {
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'sb-links-'));
  t.after(() => fs.rmSync(tmp, { recursive: true, force: true }));
  const ours = scratchPackage(path.join(tmp, 'ours'));
  const theirs = scratchPackage(path.join(tmp, 'theirs'), 'something-else');
  const bin = path.join(tmp, 'bin');
  fs.mkdirSync(bin);
  fs.symlinkSync('../ours/dist/cli/main.js', path.join(bin, 'relative'));
  fs.symlinkSync(path.join(theirs, 'dist/cli/main.js'), path.join(bin, 'theirs'));
  fs.symlinkSync(path.join(tmp, 'moved/dist/cli/main.js'), path.join(bin, 'stale'));
  fs.symlinkSync(path.join(tmp, 'moved/bin/tool'), path.join(bin, 'dangling'));
  fs.writeFileSync(path.join(bin, 'file'), '#!/bin/sh\n');
  const tail = path.join('dist', 'cli', 'main.js');
  const real = fs.realpathSync(path.join(ours, tail));
  assert.deepEqual(inspectPlace(path.join(bin, 'relative'), tail), { kind: 'link', target: path.join(ours, tail), real, sessionbrake: true });
  assert.equal(inspectPlace(path.join(bin, 'theirs'), tail).sessionbrake, false, 'same path tail, another package');
  assert.deepEqual(inspectPlace(path.join(bin, 'stale'), tail), { kind: 'link', target: path.join(tmp, 'moved', tail), real: undefined, sessionbrake: true });
  assert.equal(inspectPlace(path.join(bin, 'dangling'), tail).sessionbrake, false);
  assert.deepEqual(inspectPlace(path.join(bin, 'file'), tail), { kind: 'other', what: 'file' });
  assert.deepEqual(inspectPlace(path.join(bin, 'none'), tail), { kind: 'absent' });
});

test('linkCommands: links and makes the entry point executable; a foreign file is untouched; a stale link is replaced; a second run keeps all', (t) => {
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'sb-links-'));
  t.after(() => fs.rmSync(tmp, { recursive: true, force: true }));
  const root = fs.realpathSync(scratchPackage(path.join(tmp, 'checkout')));   // the links name real paths
  fs.mkdirSync(path.join(root, 'dist/daemon'));
  fs.writeFileSync(path.join(root, 'dist/daemon/main.js'), '#!/usr/bin/env node\n', { mode: 0o644 });
  const bin = path.join(tmp, 'home/.local/bin');
  fs.mkdirSync(bin, { recursive: true });
  fs.writeFileSync(path.join(bin, 'sbd'), 'mine\n');                                             // a file of the user's
  fs.symlinkSync(path.join(tmp, 'old-checkout/dist/cli/main.js'), path.join(bin, 'sbctl'));       // the checkout moved
  const commands = [{ name: 'sbctl', entryTail: 'dist/cli/main.js' }, { name: 'sbd', entryTail: 'dist/daemon/main.js' }];

  const first = linkCommands(root, commands, bin);
  assert.deepEqual(first.map((r) => r.decision.action), ['replace', 'skip']);
  assert.equal(fs.readlinkSync(path.join(bin, 'sbctl')), path.join(root, 'dist/cli/main.js'));
  assert.equal(fs.statSync(path.join(root, 'dist/cli/main.js')).mode & 0o777, 0o755, 'a+x where readable');
  assert.equal(fs.readFileSync(path.join(bin, 'sbd'), 'utf8'), 'mine\n', 'the user\'s file is untouched');
  assert.equal(fs.statSync(path.join(root, 'dist/daemon/main.js')).mode & 0o777, 0o644, 'a skipped command\'s entry point is not touched either');
  const home = path.join(tmp, 'home');
  assert.equal(describeLink(first[0], home), `linked ~/.local/bin/sbctl -> ${path.join(root, 'dist/cli/main.js')} (it linked to ${path.join(tmp, 'old-checkout/dist/cli/main.js')}, which is gone)`);
  assert.equal(describeLink(first[1], home), '~/.local/bin/sbd is a file, not sessionbrake\'s link: left alone (remove it and run npm start again to link sbd there)');

  const second = linkCommands(root, commands, bin);
  assert.deepEqual(second.map((r) => r.decision.action), ['keep', 'skip']);
  assert.equal(describeLink(second[0], home), `~/.local/bin/sbctl already links to ${path.join(root, 'dist/cli/main.js')}`);
  assert.deepEqual(fs.readdirSync(bin).sort(), ['sbctl', 'sbd'], 'no temporary link left behind');
});

test('linkCommands creates a missing bin directory, and says why a command could not be linked', (t) => {
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'sb-links-'));
  t.after(() => fs.rmSync(tmp, { recursive: true, force: true }));
  const root = scratchPackage(path.join(tmp, 'checkout'));
  const bin = path.join(tmp, 'fresh/bin');
  const [ok, missing] = linkCommands(root, [{ name: 'sbctl', entryTail: 'dist/cli/main.js' }, { name: 'sbd', entryTail: 'dist/daemon/main.js' }], bin);
  assert.equal(ok.decision.action, 'create');
  assert.equal(fs.realpathSync(path.join(bin, 'sbctl')), fs.realpathSync(path.join(root, 'dist/cli/main.js')));
  assert.match(describeLink(missing, tmp), /^~\/fresh\/bin\/sbd: not linked: stat .*dist\/daemon\/main\.js: ENOENT$/);
  assert.equal(fs.existsSync(path.join(bin, 'sbd')), false, 'no link to an entry point that does not exist');
});
