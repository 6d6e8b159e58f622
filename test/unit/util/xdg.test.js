// @ts-check
'use strict';
// One XDG lookup for the config file, the state file and the user unit directory (issue 12,
// fault 9: there were three, and each took a relative $XDG_* value as a path).
const test = require('node:test');
const assert = require('node:assert/strict');
const { defaultConfigPath } = require('../../../dist/config/load.js');
const { defaultStatePath } = require('../../../dist/daemon/state-file.js');
const { userUnitDir } = require('../../../dist/cli/install.js');

const home = { HOME: '/home/ann' };

test('set and absolute: used', () => {
  assert.equal(defaultConfigPath({ ...home, XDG_CONFIG_HOME: '/cfg' }), '/cfg/sessionbrake/config.json');
  assert.equal(userUnitDir({ ...home, XDG_CONFIG_HOME: '/cfg' }), '/cfg/systemd/user');
  assert.equal(defaultStatePath({ ...home, XDG_STATE_HOME: '/st' }), '/st/sessionbrake/state.json');
});

test('unset, empty or relative: the home default (the specification says a relative path is invalid)', () => {
  for (const bad of [undefined, '', 'relative/dir', './x']) {
    const env = { ...home, ...(bad === undefined ? {} : { XDG_CONFIG_HOME: bad, XDG_STATE_HOME: bad }) };
    assert.equal(defaultConfigPath(env), '/home/ann/.config/sessionbrake/config.json', `XDG_CONFIG_HOME=${bad}`);
    assert.equal(userUnitDir(env), '/home/ann/.config/systemd/user', `XDG_CONFIG_HOME=${bad}`);
    assert.equal(defaultStatePath(env), '/home/ann/.local/state/sessionbrake/state.json', `XDG_STATE_HOME=${bad}`);
  }
});
