#!/usr/bin/env node
// @ts-check
'use strict';
// `npm start`'s first step, runnable alone: links sbctl and sbd into ~/.local/bin (or
// $XDG_BIN_HOME) to this checkout's dist/ entry points and says what to add to PATH when that
// directory is not on it. Exit 1 when a command could not be linked (said why); idempotent.
const path = require('node:path');

const root = path.resolve(__dirname, '..');

/** @returns {import('../dist/install/link-step').LinkStep} */
function linkBins(env = process.env) {
  // dist/ is built by `npm ci` (prepare); a checkout without it says so.
  const { runLinkStep } = require(path.join(root, 'dist/install/link-step.js'));
  return runLinkStep(root, env);
}

if (require.main === module) {
  const step = linkBins();
  for (const line of [...step.lines, ...step.advice]) console.log(`start: ${line}`);
  process.exit(step.incomplete ? 1 : 0);
}

module.exports = { linkBins };
