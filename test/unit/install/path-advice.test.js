// @ts-check
'use strict';
// Issue 14: when ~/.local/bin is not on PATH, `npm start` says what to add, and where: the login
// startup file the user's shell really reads, or "log in again" when that file already adds it
// (Debian's default ~/.profile does, for a ~/.local/bin that exists at login).
const test = require('node:test');
const assert = require('node:assert/strict');
const { dirOnPath, loginStartupFile, startupMentions, pathAdvice } = require('../../../dist/install/path-advice.js');
const { xdgHome } = require('../../../dist/util/xdg.js');

const HOME = '/home/ann';
const BIN = '/home/ann/.local/bin';
// Debian 12's /etc/skel/.profile, the part about PATH.
const DEBIAN_PROFILE = `# set PATH so it includes user's private bin if it exists
if [ -d "$HOME/bin" ] ; then
    PATH="$HOME/bin:$PATH"
fi

# set PATH so it includes user's private bin if it exists
if [ -d "$HOME/.local/bin" ] ; then
    PATH="$HOME/.local/bin:$PATH"
fi
`;

test('dirOnPath: an entry equal to the directory, trailing slash or not; relative and empty entries never count', () => {
  assert.equal(dirOnPath(BIN, `/usr/bin:${BIN}`), true);
  assert.equal(dirOnPath(BIN, `${BIN}/:/usr/bin`), true);
  assert.equal(dirOnPath(BIN, '/home/ann/.local/./bin'), true);
  assert.equal(dirOnPath(BIN, '/usr/local/bin:/usr/bin:/bin'), false);
  assert.equal(dirOnPath(BIN, '.local/bin::'), false);
  assert.equal(dirOnPath(BIN, undefined), false);
});

test('the bin directory: $XDG_BIN_HOME when absolute, else ~/.local/bin', () => {
  assert.equal(xdgHome('bin', { HOME }), BIN);
  assert.equal(xdgHome('bin', { HOME, XDG_BIN_HOME: '/opt/ann/bin' }), '/opt/ann/bin');
  assert.equal(xdgHome('bin', { HOME, XDG_BIN_HOME: 'bin' }), BIN, 'relative: ignored, as the XDG specification says');
});

test('loginStartupFile: the file each login shell reads', () => {
  const none = () => false;
  assert.equal(loginStartupFile('/bin/bash', none), '.profile');
  assert.equal(loginStartupFile('/bin/bash', (n) => n === '.bash_profile' || n === '.bash_login'), '.bash_profile', 'bash reads only the first that exists');
  assert.equal(loginStartupFile('/bin/bash', (n) => n === '.bash_login'), '.bash_login');
  assert.equal(loginStartupFile('/usr/bin/zsh', none), '.zprofile');
  assert.equal(loginStartupFile('/bin/dash', () => true), '.profile');
  assert.equal(loginStartupFile(undefined, none), '.profile');
});

test('startupMentions: a PATH line naming the directory, in any of the shell\'s spellings; comments do not count', () => {
  assert.equal(startupMentions(DEBIAN_PROFILE, BIN, HOME), true);
  assert.equal(startupMentions('export PATH=~/.local/bin:$PATH', BIN, HOME), true);
  assert.equal(startupMentions('PATH="${HOME}/.local/bin:$PATH"', BIN, HOME), true);
  assert.equal(startupMentions('export PATH=/home/ann/.local/bin:$PATH', BIN, HOME), true);
  assert.equal(startupMentions('# PATH="$HOME/.local/bin:$PATH"', BIN, HOME), false);
  assert.equal(startupMentions(DEBIAN_PROFILE, '/opt/ann/bin', HOME), false);
  assert.equal(startupMentions('', BIN, HOME), false);
});

test('pathAdvice: nothing when on PATH; the line and the file when not; "log in again" when the file adds it already', () => {
  const facts = { dir: BIN, home: HOME, startupFile: '.profile', startupText: '' };
  assert.deepEqual(pathAdvice({ ...facts, pathVar: `/usr/bin:${BIN}` }), []);
  assert.deepEqual(pathAdvice({ ...facts, pathVar: '/usr/bin:/bin' }), [
    '~/.local/bin is not on your PATH: add this line to ~/.profile, then log in again:',
    '  export PATH="$HOME/.local/bin:$PATH"',
  ]);
  assert.deepEqual(pathAdvice({ ...facts, pathVar: '/usr/bin:/bin', startupText: DEBIAN_PROFILE }), [
    '~/.local/bin is not on your PATH yet: your ~/.profile puts it there when you log in, now that it exists.',
    'Log in again, or run this in the shells you have open: export PATH="$HOME/.local/bin:$PATH"',
  ]);
  assert.deepEqual(pathAdvice({ ...facts, dir: '/opt/ann/bin', startupFile: '.zprofile', pathVar: '/usr/bin' }), [
    '/opt/ann/bin is not on your PATH: add this line to ~/.zprofile, then log in again:',
    '  export PATH="/opt/ann/bin:$PATH"',
  ]);
});
