// @ts-check
'use strict';
// Runs one guest benchmark script in a fresh lab guest (test/vm/run-in-vm.sh) and returns the
// path of the NAME.tsv it left in $LAB_OUT; exits with a message when there is none.
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { spawnSync } = require('node:child_process');

const root = path.resolve(__dirname, '..');

/** @param {string} name  @param {string} script  bash run as root in the guest */
function runGuestBench(name, script, timeoutS = 5400) {
  const outDir = fs.mkdtempSync(path.join(os.tmpdir(), `sb-bench-${name}-`));
  if (spawnSync('bash', [path.join(root, 'test/vm/build-image.sh')], { stdio: ['ignore', 'ignore', 'inherit'] }).status !== 0) {
    console.error(`bench:${name}: the guest image could not be built (see above)`);
    process.exit(1);
  }
  const file = path.join(outDir, 'run.sh');
  fs.writeFileSync(file, script);
  const r = spawnSync('bash', [path.join(root, 'test/vm/run-in-vm.sh'), '-p', root, '-o', outDir, '-t', String(timeoutS), '-f', file], { stdio: 'inherit' });
  const tsv = path.join(outDir, `${name}.tsv`);
  if (!fs.existsSync(tsv)) {
    console.error(`bench:${name}: no results in ${outDir} (run-in-vm.sh exit ${r.status})`);
    process.exit(1);
  }
  return tsv;
}

module.exports = { runGuestBench };
