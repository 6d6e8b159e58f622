// @ts-check
'use strict';
// Issue 14: `sbctl install` says where the unit runs sbd from. An npm install stays put; a
// checkout breaks sbd when it moves, and the output says so (it did not: the issue's "the
// installed unit runs from the checkout, so moving the checkout breaks sbd, unsaid").
const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const path = require('node:path');
const { describeSource, renderUnit } = require('../../../dist/cli/install.js');

test('an npm install (a package directory in node_modules/): one line naming the entry point and node', () => {
  assert.deepEqual(describeSource('/home/ann/.local/lib/node_modules/sessionbrake', '/usr/local/bin/node'), [
    'sbd.service runs /home/ann/.local/lib/node_modules/sessionbrake/dist/daemon/main.js (installed by npm) with /usr/local/bin/node',
  ]);
});

test('a checkout: said, with what moving it does and the two ways out', () => {
  const lines = describeSource('/home/ann/src/sessionbrake', '/usr/bin/node');
  assert.equal(lines[0], 'sbd.service runs /home/ann/src/sessionbrake/dist/daemon/main.js from the checkout /home/ann/src/sessionbrake, with /usr/bin/node:');
  assert.match(lines[1] ?? '', /^moving or removing this checkout breaks sbd; run `sbctl install --now` again from its new place,$/);
  assert.match(lines[2] ?? '', /npm pack; npm install -g \.\/sessionbrake-\*\.tgz/);
  assert.match(describeSource('/srv/node_modules_backup/sessionbrake', '/usr/bin/node')[0] ?? '', /from the checkout/, 'only a directory named node_modules is npm\'s');
});

test('the unit\'s ExecStart runs the given root\'s sbd with the given node', () => {
  const root = path.resolve(__dirname, '../../..');
  const unit = renderUnit('sbd.service', '/usr/local/bin/node', root);
  assert.match(unit, new RegExp(`^ExecStart=/usr/local/bin/node ${root}/dist/daemon/main\\.js$`, 'm'));
  assert.ok(fs.existsSync(path.join(root, 'dist/daemon/main.js')));
});
