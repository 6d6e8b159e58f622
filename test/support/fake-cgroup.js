// @ts-check
'use strict';
// The files of one fake scope directory that the session feed reads (meta oomd's fake cgroup
// trees): the test sets its figures before each sample. Without `pressure`, memory.pressure is
// left out, as on a kernel booted psi=0.
const fs = require('node:fs');
const path = require('node:path');

const MiB = 2 ** 20;

/** @param {string} dir @param {{fullUs?: number, ownHigh?: number, current?: number, pressure?: boolean}} figures */
function writeScopeFiles(dir, { fullUs = 0, ownHigh = 0, current = 63 * MiB, anon = current, pressure = true }) {
  fs.writeFileSync(path.join(dir, 'memory.current'), `${current}\n`);
  fs.writeFileSync(path.join(dir, 'memory.high'), `${64 * MiB}\n`);
  fs.writeFileSync(path.join(dir, 'memory.max'), 'max\n');
  fs.writeFileSync(path.join(dir, 'memory.stat'), `anon ${anon}\nfile ${current - anon}\nshmem 0\n`);
  fs.writeFileSync(path.join(dir, 'memory.events.local'), `low 0\nhigh ${ownHigh}\nmax 0\noom 0\noom_kill 0\n`);
  if (pressure) fs.writeFileSync(path.join(dir, 'memory.pressure'), `some avg10=0.00 avg60=0.00 avg300=0.00 total=${fullUs}\nfull avg10=0.00 avg60=0.00 avg300=0.00 total=${fullUs}\n`);
}

module.exports = { writeScopeFiles };
