// @ts-check
'use strict';
// Small helpers shared by host tests: fd counting, waiting, child processes.
const fs = require('node:fs');
const { setTimeout: sleep } = require('node:timers/promises');

/** The number of fds this process holds now. */
function countFds() {
  return fs.readdirSync('/proc/self/fd').length;
}

/** The fds of this process that point at `target` (a path, or a prefix such as "anon_inode:"). */
function fdsPointingAt(target) {
  const out = [];
  for (const fd of fs.readdirSync('/proc/self/fd')) {
    try {
      if (fs.readlinkSync(`/proc/self/fd/${fd}`).startsWith(target)) out.push(Number(fd));
    } catch {
      /* the fd of readdir itself is gone already */
    }
  }
  return out;
}

/** Poll `predicate` until true, or throw after `timeoutMs` naming `what`. */
async function waitFor(what, predicate, timeoutMs = 5000, stepMs = 10) {
  const end = Date.now() + timeoutMs;
  while (Date.now() < end) {
    if (await predicate()) return;
    await sleep(stepMs);
  }
  throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
}

/** Resolves with [code, signal] once `child` has exited and been reaped by libuv. */
function reaped(child) {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve([child.exitCode, child.signalCode]);
  return new Promise((resolve) => child.once('exit', (code, signal) => resolve([code, signal])));
}

/** True when this process holds CAP_SYS_RESOURCE (bit 24 of CapEff). */
function hasCapSysResource() {
  const line = fs.readFileSync('/proc/self/status', 'utf8').split('\n').find((l) => l.startsWith('CapEff:'));
  return line !== undefined && (BigInt(`0x${line.split(/\s+/)[1]}`) & (1n << 24n)) !== 0n;
}

module.exports = { countFds, fdsPointingAt, waitFor, reaped, hasCapSysResource, sleep };
