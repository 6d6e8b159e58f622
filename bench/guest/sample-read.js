// @ts-check
'use strict';
// In the guest, as tester: what each file of a feed's sample costs to read again through its held
// fd (src/cgroup/read.ts SampleFiles: a positioned read at offset 0, latin1), in a scope holding
// 24 MiB of anonymous memory under a brake, as a storm's hog does (bench/sample-read.js). The
// baseline in the same run: the same read of a file on tmpfs (/dev/shm) of memory.stat's size,
// the syscall's cost without a cgroup file's generation. Prints file, µs per read (median of
// ROUNDS rounds of N reads), and the ratio to the baseline.
//   node sample-read.js N ROUNDS
const fs = require('node:fs');
const { spawn, spawnSync } = require('node:child_process');

const FILES = ['memory.current', 'memory.high', 'memory.max', 'memory.stat', 'memory.events.local', 'memory.pressure', 'memory.swap.max', 'cpu.pressure'];
const n = Number(process.argv[2] ?? 2000);
const rounds = Number(process.argv[3] ?? 5);
const unit = `sample-read-${process.pid}.scope`;
const hog = 'import time\nb = bytearray(24 << 20)\nfor i in range(0, len(b), 4096): b[i] = 1\ntime.sleep(600)';
// systemd-run --scope runs the hog in the foreground, in its new scope
spawn('systemd-run', ['--user', '--scope', `--unit=${unit}`, '--slice=sessions.slice', '-p', 'MemoryHigh=32M', '--collect', 'python3', '-c', hog], { stdio: 'ignore', detached: true }).unref();
const dir = `/sys/fs/cgroup/user.slice/user-${process.getuid?.()}.slice/user@${process.getuid?.()}.service/sessions.slice/${unit}`;
for (let i = 0; i < 100 && !fs.existsSync(`${dir}/memory.current`); i++) spawnSync('sleep', ['0.1']);
spawnSync('sleep', ['2']); // its 24 MiB written
const buf = Buffer.allocUnsafe(8192);
const readAgain = (fd) => buf.toString('latin1', 0, fs.readSync(fd, buf, 0, buf.length, 0));
const shm = `/dev/shm/sample-read-${process.pid}`;
fs.writeFileSync(shm, fs.readFileSync(`${dir}/memory.stat`));
const usPer = (file) => {
  const fd = fs.openSync(file, 'r');
  const per = [];
  for (let k = 0; k < 200; k++) readAgain(fd); // warm
  for (let round = 0; round < rounds; round++) {
    const a = process.hrtime.bigint();
    for (let k = 0; k < n; k++) readAgain(fd);
    per.push(Number(process.hrtime.bigint() - a) / n / 1000);
  }
  fs.closeSync(fd);
  per.sort((x, y) => x - y);
  return per[Math.floor((per.length - 1) / 2)];
};
const base = usPer(shm);
console.log(['file', 'bytes', 'us_per_read', 'vs_tmpfs'].join('\t'));
console.log(['tmpfs (baseline)', fs.statSync(shm).size, base.toFixed(1), '1.00'].join('\t'));
let total = 0;
for (const f of FILES) {
  const us = usPer(`${dir}/${f}`);
  total += us;
  console.log([f, fs.readFileSync(`${dir}/${f}`).length, us.toFixed(1), (us / base).toFixed(2)].join('\t'));
}
console.log(['all eight', '', total.toFixed(1), (total / base).toFixed(2)].join('\t'));
fs.unlinkSync(shm);
spawnSync('systemctl', ['--user', 'stop', unit]);
