/**
 * One method call on a D-Bus bus and its answer, over a plain unix socket (node:net): the SASL
 * EXTERNAL handshake with our uid, Hello, the call, the reply matched by its serial, then the
 * socket closed. What `sbctl status` needs of a bus, at a fraction of a full client's start-up.
 */
import * as net from 'node:net';
import { ERROR, METHOD_RETURN, type MethodCall, decodeMessage, encodeMethodCall, messageLength } from './wire';

/** An error the bus or the callee answered with: its D-Bus name and its text. */
export class BusLiteError extends Error {
  constructor(readonly type: string, text: string) {
    super(text);
    this.name = 'BusLiteError';
  }
}

/** The socket of a `unix:path=…` or `unix:abstract=…` address (the first that is one). */
export function socketOf(address: string): string {
  for (const part of address.split(';')) {
    const m = /^unix:(.*)$/.exec(part);
    if (!m) continue;
    const kv = new Map((m[1] as string).split(',').map((x) => x.split('=', 2) as [string, string]));
    const unescape = (v: string): string => v.replace(/%([0-9a-fA-F]{2})/g, (_, h: string) => String.fromCharCode(parseInt(h, 16)));
    if (kv.has('path')) return unescape(kv.get('path') as string);
    if (kv.has('abstract')) return `\0${unescape(kv.get('abstract') as string)}`;
  }
  throw new Error(`no unix socket in the bus address "${address}"`);
}

const HELLO: MethodCall = { destination: 'org.freedesktop.DBus', path: '/org/freedesktop/DBus', interface: 'org.freedesktop.DBus', member: 'Hello' };

/** Calls `call` and resolves with its answer's body; rejects with BusLiteError for an error answer. */
export function callOnce(address: string, call: MethodCall, timeoutMs: number, uid = process.getuid?.() ?? 0): Promise<unknown[]> {
  return new Promise((resolve, reject) => {
    const sock = net.createConnection({ path: socketOf(address) });
    let buf = Buffer.alloc(0);
    let authed = false;
    const done = (err: Error | undefined, body?: unknown[]): void => {
      clearTimeout(timer);
      sock.destroy();
      if (err) reject(err);
      else resolve(body ?? []);
    };
    const timer = setTimeout(() => done(new Error(`no answer to ${call.interface}.${call.member} from ${call.destination} within ${timeoutMs} ms`)), timeoutMs);
    sock.on('error', (err) => done(err));
    sock.on('connect', () => {
      sock.write(`\0AUTH EXTERNAL ${Buffer.from(String(uid)).toString('hex')}\r\n`);
    });
    sock.on('data', (chunk: Buffer) => {
      buf = Buffer.concat([buf, chunk]);
      try {
        if (!authed) {
          const eol = buf.indexOf('\r\n');
          if (eol < 0) return;
          const line = buf.toString('latin1', 0, eol);
          buf = buf.subarray(eol + 2);
          if (!line.startsWith('OK ')) return done(new Error(`the bus refused us: ${line}`));
          authed = true;
          // BEGIN, then Hello (serial 1) and the call (serial 2) at once: the bus answers in order
          sock.write(Buffer.concat([Buffer.from('BEGIN\r\n'), encodeMethodCall(1, HELLO), encodeMethodCall(2, call)]));
        }
        for (let len = messageLength(buf); len !== undefined && buf.length >= len; len = messageLength(buf)) {
          const msg = decodeMessage(buf.subarray(0, len));
          buf = buf.subarray(len);
          if (msg.replySerial === 1 && msg.type === ERROR) return done(new BusLiteError(msg.errorName ?? '', String(msg.body[0] ?? 'Hello refused')));
          if (msg.replySerial !== 2) continue; // Hello's answer, NameAcquired
          if (msg.type === METHOD_RETURN) return done(undefined, msg.body);
          if (msg.type === ERROR) return done(new BusLiteError(msg.errorName ?? '', String(msg.body[0] ?? msg.errorName)));
        }
      } catch (err) {
        done(err as Error);
      }
    });
    sock.on('close', () => done(new Error(`the bus closed the connection before answering ${call.interface}.${call.member}`)));
  });
}
