// @ts-check
'use strict';
// The baseline of the monitors' idle benchmark: what a monitor without inotify does, every second
// a stat of each file and a read of what it gained since the last look. Usage: node poll-loop.js FILE...
const fs = require('node:fs');

const files = process.argv.slice(2);
const seen = new Map(files.map((f) => [f, fs.statSync(f).size]));
setInterval(() => {
  for (const f of files) {
    const size = fs.statSync(f).size;
    const was = seen.get(f) ?? 0;
    if (size > was) {
      const fd = fs.openSync(f, 'r');
      fs.readSync(fd, Buffer.alloc(size - was), 0, size - was, was);
      fs.closeSync(fd);
    }
    seen.set(f, size);
  }
}, 1000);
