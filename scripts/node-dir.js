// @ts-check
'use strict';
// Where Node's own headers are. cmake-js and node-gyp download them otherwise, and these
// machines reach no web. npm exports its `nodedir` setting to the scripts it runs; when a
// script is run by hand, the headers beside the running node binary are used.
const fs = require('node:fs');
const path = require('node:path');

/** @returns {string | undefined} */
function nodeDir() {
  if (process.env.npm_config_nodedir) return process.env.npm_config_nodedir;
  const guess = path.resolve(process.execPath, '../..');
  return fs.existsSync(path.join(guess, 'include/node/common.gypi')) ? guess : undefined;
}

/** The environment for a child build tool, with npm_config_nodedir set when known. */
function buildEnv() {
  const dir = nodeDir();
  return dir ? { ...process.env, npm_config_nodedir: dir } : { ...process.env };
}

module.exports = { nodeDir, buildEnv };
