// @ts-check
'use strict';
// A stand-in for journald's native socket, in Python (Node has no unix datagram sockets): binds
// an AF_UNIX datagram socket, receives ONE datagram with its SCM_RIGHTS fds, and reports what
// came: the payload, or, for a datagram carrying one fd, that fd's contents and seals, as
// journald would read a memfd. Also a decoder of the native protocol, to read what arrived.
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { spawn } = require('node:child_process');

const PY = `
import array, fcntl, json, os, socket, sys
addr, out = sys.argv[1], sys.argv[2]
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
s.bind("\\0" + addr[1:] if addr.startswith("@") else addr)
print("ready", flush=True)
s.settimeout(20)
fds = array.array("i")
data, anc, flags, _ = s.recvmsg(1 << 20, socket.CMSG_SPACE(16 * fds.itemsize))
for level, kind, blob in anc:
    if level == socket.SOL_SOCKET and kind == socket.SCM_RIGHTS:
        fds.frombytes(blob[: len(blob) - len(blob) % fds.itemsize])
report = {"payloadBytes": len(data), "fds": len(fds), "truncated": bool(flags & socket.MSG_TRUNC)}
if len(fds) == 1:
    fd = fds[0]
    report["seals"] = fcntl.fcntl(fd, fcntl.F_GET_SEALS)
    data = os.pread(fd, os.fstat(fd).st_size, 0)
with open(out, "wb") as f:
    f.write(data)
print(json.dumps(report), flush=True)
`;

/**
 * Listen on `address` ("/path" or "@abstract"). `ready` resolves once bound; `received` with
 * { bytes, report } once one datagram came (report: payloadBytes, fds, seals when an fd came).
 */
function journalListener(address) {
  const out = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'sb-journal-rx-')), 'entry');
  const child = spawn('python3', ['-c', PY, address, out], { stdio: ['ignore', 'pipe', 'inherit'] });
  let text = '';
  const ready = new Promise((resolve, reject) => {
    child.stdout.on('data', (d) => {
      text += d;
      if (text.startsWith('ready\n')) resolve(undefined);
    });
    child.once('exit', (code) => reject(new Error(`the listener exited (${code}) before it was ready: ${text}`)));
  });
  const received = new Promise((resolve, reject) => child.once('exit', (code) => {
    if (code !== 0) return reject(new Error(`the listener failed (${code}): ${text}`));
    resolve({ bytes: fs.readFileSync(out), report: JSON.parse(text.split('\n')[1] ?? '') });
  }));
  return { ready, received, close: () => child.kill() };
}

/** The fields of an entry in the native protocol, in order: [name, value as a Buffer]. */
function decodeEntry(bytes) {
  const fields = [];
  let at = 0;
  while (at < bytes.length) {
    const nl = bytes.indexOf(0x0a, at);
    if (nl < 0) throw new Error(`no newline after byte ${at}`);
    const eq = bytes.indexOf(0x3d, at);
    if (eq >= 0 && eq < nl) {
      fields.push([bytes.toString('ascii', at, eq), bytes.subarray(eq + 1, nl)]);
      at = nl + 1;
    } else {
      const len = Number(bytes.readBigUInt64LE(nl + 1));
      const start = nl + 9;
      if (bytes[start + len] !== 0x0a) throw new Error(`the binary-safe value of ${bytes.toString('ascii', at, nl)} does not end in a newline`);
      fields.push([bytes.toString('ascii', at, nl), bytes.subarray(start, start + len)]);
      at = start + len + 1;
    }
  }
  return fields;
}

module.exports = { journalListener, decodeEntry };
