// @ts-check
'use strict';
const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { spawn } = require('node:child_process');
const { sdNotify } = require('../../dist/native.js');

/**
 * A datagram receiver in Python (Node has no unix datagram sockets): binds `address`, prints
 * "ready", then the first datagram it gets as JSON, and exits.
 */
function receiver(address) {
  const py = `
import json, socket, sys
a = sys.argv[1]
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
s.bind("\\0" + a[1:] if a.startswith("@") else a)
print("ready", flush=True)
s.settimeout(10)
print(json.dumps(s.recv(65536).decode()), flush=True)
`;
  const child = spawn('python3', ['-c', py, address], { stdio: ['ignore', 'pipe', 'inherit'] });
  let out = '';
  const ready = new Promise((resolve, reject) => {
    child.stdout.on('data', (d) => {
      out += d;
      if (out.startsWith('ready\n')) resolve(undefined);
    });
    child.once('exit', () => reject(new Error(`receiver exited early: ${out}`)));
  });
  const received = new Promise((resolve) => child.once('exit', () => resolve(JSON.parse(out.split('\n')[1]))));
  return { ready, received };
}

const payload = 'READY=1\nSTATUS=3 sessions, feed: psi\n';

test('a datagram with the exact payload arrives on a socket path', async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sb-notify-'));
  const sock = path.join(dir, 'notify');
  const r = receiver(sock);
  await r.ready;
  assert.equal(sdNotify(payload, sock), true);
  assert.equal(await r.received, payload);
});

test('a socket name starting with @ is an abstract socket', async () => {
  const name = `@sb-test-${process.pid}-${Date.now()}`;
  const r = receiver(name);
  await r.ready;
  assert.equal(sdNotify('WATCHDOG=1', name), true);
  assert.equal(await r.received, 'WATCHDOG=1');
});

test('with no NOTIFY_SOCKET nothing is sent and the answer is false', () => {
  const saved = process.env.NOTIFY_SOCKET;
  delete process.env.NOTIFY_SOCKET;
  try {
    assert.equal(sdNotify('READY=1'), false);
  } finally {
    if (saved !== undefined) process.env.NOTIFY_SOCKET = saved;
  }
});

test('a socket nobody listens on fails naming sendto and the path', () => {
  const sock = path.join(os.tmpdir(), `sb-nobody-${process.pid}`);
  assert.throws(() => sdNotify('READY=1', sock), { code: 'ENOENT', syscall: 'sendto', path: sock });
  assert.throws(() => sdNotify('READY=1', 'relative/path'), { code: 'EINVAL', syscall: 'connect' });
});
