/**
 * The D-Bus wire format, little-endian, for one method call and its answer (pure): enough of the
 * specification ("Message Protocol: Marshaling") for `sbctl status` to ask sbd without loading
 * dbus-next, whose compile is most of a short command's start under the lab's CPU emulation.
 * Values as dbus-next hands them: 64-bit integers as bigint, a struct as an array, a dict as an
 * object (without a prototype), a variant as { signature, value }.
 */

/** A complete type of a signature, parsed. */
export type WireType =
  | { kind: 'basic'; code: string }
  | { kind: 'array'; of: WireType }
  | { kind: 'struct'; of: WireType[] }
  | { kind: 'dict'; key: WireType; value: WireType }
  | { kind: 'variant' };

export class WireError extends Error {}

const BASIC = 'ybnqiuxtdsogh';
const ALIGN: Record<string, number> = { y: 1, b: 4, n: 2, q: 2, i: 4, u: 4, x: 8, t: 8, d: 8, s: 4, o: 4, g: 1, h: 4, v: 1 };

/** Signatures parsed already: a signal's few, and its variants' (its figures: "d", "t", "as"). */
const parsed = new Map<string, readonly WireType[]>();
/** Signatures kept parsed at most: sbd's own are a few dozen; a peer's new ones start it afresh. */
const PARSED_KEPT = 256;

/** The complete types of a signature ("(su)as" -> two). The same answer for the same signature,
 * shared: its array is frozen, and no caller changes the types in it. */
export function parseSignature(sig: string): readonly WireType[] {
  const known = parsed.get(sig);
  if (known) return known;
  const types = Object.freeze(parseSignatureAnew(sig));
  if (parsed.size >= PARSED_KEPT) parsed.clear();
  parsed.set(sig, types);
  return types;
}

function parseSignatureAnew(sig: string): WireType[] {
  const out: WireType[] = [];
  let i = 0;
  const one = (): WireType => {
    const c = sig[i++];
    if (c === undefined) throw new WireError(`signature "${sig}" ends too soon`);
    if (BASIC.includes(c)) return { kind: 'basic', code: c };
    if (c === 'v') return { kind: 'variant' };
    if (c === 'a') {
      if (sig[i] === '{') {
        i++;
        const key = one();
        if (sig[i] === '}' || sig[i] === undefined) throw new WireError(`signature "${sig}": a dict entry holds two types`);
        const value = one();
        if (sig[i++] !== '}') throw new WireError(`signature "${sig}": a dict entry holds two types`);
        return { kind: 'dict', key, value };
      }
      return { kind: 'array', of: one() };
    }
    if (c === '(') {
      const of: WireType[] = [];
      while (sig[i] !== ')') {
        if (i >= sig.length) throw new WireError(`signature "${sig}": unclosed struct`);
        of.push(one());
      }
      i++;
      return { kind: 'struct', of };
    }
    throw new WireError(`signature "${sig}": unknown type code "${c}"`);
  };
  while (i < sig.length) out.push(one());
  return out;
}

// an array (a dict is an array of entries) aligns on its length, 4; a struct and a dict entry on 8
const alignOf = (t: WireType): number => (t.kind === 'basic' ? ALIGN[t.code] ?? 1 : t.kind === 'array' || t.kind === 'dict' ? 4 : t.kind === 'variant' ? 1 : 8);

/** Reads values from a message body or header (offsets count from the message's first byte). */
export class WireReader {
  constructor(private readonly buf: Buffer, public offset = 0) {}

  private align(n: number): void {
    this.offset = Math.ceil(this.offset / n) * n;
  }

  private need(n: number): void {
    if (this.offset + n > this.buf.length) throw new WireError(`message truncated: ${n} bytes wanted at offset ${this.offset} of ${this.buf.length}`);
  }

  read(t: WireType): unknown {
    this.align(alignOf(t));
    switch (t.kind) {
      case 'basic':
        return this.basic(t.code);
      case 'variant': {
        const sig = this.basic('g') as string;
        const [inner, ...more] = parseSignature(sig);
        if (!inner || more.length) throw new WireError(`a variant holds one complete type, not "${sig}"`);
        return { signature: sig, value: this.read(inner) };
      }
      case 'struct':
        return t.of.map((f) => this.read(f));
      case 'array':
      case 'dict': {
        const length = this.basic('u') as number;
        this.align(t.kind === 'dict' ? 8 : alignOf(t.of));
        const end = this.offset + length;
        this.need(length);
        if (t.kind === 'dict') {
          const obj: Record<string, unknown> = Object.create(null); // a key "__proto__" is a key, not a prototype
          while (this.offset < end) {
            this.align(8);
            const k = this.read(t.key);
            obj[String(k)] = this.read(t.value);
          }
          return obj;
        }
        const items: unknown[] = [];
        while (this.offset < end) items.push(this.read(t.of));
        return items;
      }
    }
  }

  private basic(code: string): unknown {
    const b = this.buf;
    const at = (n: number): number => {
      this.need(n);
      const o = this.offset;
      this.offset += n;
      return o;
    };
    switch (code) {
      case 'y': return b.readUInt8(at(1));
      case 'b': return b.readUInt32LE(at(4)) !== 0;
      case 'n': return b.readInt16LE(at(2));
      case 'q': return b.readUInt16LE(at(2));
      case 'i': return b.readInt32LE(at(4));
      case 'u': case 'h': return b.readUInt32LE(at(4));
      case 'x': return b.readBigInt64LE(at(8));
      case 't': return b.readBigUInt64LE(at(8));
      case 'd': return b.readDoubleLE(at(8));
      case 's': case 'o': {
        const len = b.readUInt32LE(at(4));
        const o = at(len + 1);
        return b.toString('utf8', o, o + len);
      }
      case 'g': {
        const len = b.readUInt8(at(1));
        const o = at(len + 1);
        return b.toString('latin1', o, o + len);
      }
      default: throw new WireError(`unknown type code "${code}"`);
    }
  }
}

/**
 * Writes values into one buffer that grows as needed, each in place: sbd's signals go through it
 * (issue 15, item 5: a buffer per value and a copy of the whole message per array cost as much as
 * dbus-next's marshalling in the storm's profile). The buffer starts zeroed, so padding only
 * moves the length, and numbers go through a DataView: Buffer's checked writes were a quarter of
 * an Incident's encoding before V8 compiles it, as in the storm's 200 tells (session 29).
 */
export class WireWriter {
  private buf = Buffer.alloc(512);
  private view = new DataView(this.buf.buffer, this.buf.byteOffset, this.buf.length);
  length = 0;

  /** Room for `n` more bytes (what lies past the length is zero). */
  private room(n: number): void {
    if (this.length + n <= this.buf.length) return;
    const bigger = Buffer.alloc(Math.max(this.buf.length * 2, this.length + n));
    this.buf.copy(bigger, 0, 0, this.length);
    this.buf = bigger;
    this.view = new DataView(bigger.buffer, bigger.byteOffset, bigger.length);
  }

  private align(n: number): void {
    const pad = (n - (this.length % n)) % n;
    if (!pad) return;
    this.room(pad);
    this.length += pad;
  }

  write(t: WireType, v: unknown): void {
    this.align(alignOf(t));
    switch (t.kind) {
      case 'basic':
        return this.basic(t.code, v);
      case 'variant': {
        const { signature, value } = v as { signature: string; value: unknown };
        const [inner] = parseSignature(signature);
        this.basic('g', signature);
        return this.write(inner as WireType, value);
      }
      case 'struct':
        (v as unknown[]).forEach((x, i) => this.write(t.of[i] as WireType, x));
        return;
      case 'array':
      case 'dict': {
        const lenAt = this.length;
        this.basic('u', 0);
        this.align(t.kind === 'dict' ? 8 : alignOf(t.of));
        const start = this.length;
        if (t.kind === 'dict') {
          for (const [k, x] of Object.entries(v as Record<string, unknown>)) {
            this.align(8);
            this.write(t.key, t.key.kind === 'basic' && 'ynqiuxtdh'.includes(t.key.code) ? Number(k) : k);
            this.write(t.value, x);
          }
        } else {
          for (const x of v as unknown[]) this.write(t.of, x);
        }
        this.view.setUint32(lenAt, this.length - start, true); // the array's length, in bytes, in place
        return;
      }
    }
  }

  private basic(code: string, v: unknown): void {
    const size = FIXED_SIZE[code];
    if (size !== undefined) {
      this.room(size);
      const d = this.view;
      const o = this.length;
      switch (code) {
        case 'y': d.setUint8(o, integer(v, code, 0, 0xff)); break;
        case 'b': d.setUint32(o, v ? 1 : 0, true); break;
        case 'n': d.setInt16(o, integer(v, code, -0x8000, 0x7fff), true); break;
        case 'q': d.setUint16(o, integer(v, code, 0, 0xffff), true); break;
        case 'i': d.setInt32(o, integer(v, code, -0x80000000, 0x7fffffff), true); break;
        case 'u': case 'h': d.setUint32(o, integer(v, code, 0, 0xffffffff), true); break;
        case 'x': d.setBigInt64(o, bigInteger(v, code, -(2n ** 63n), 2n ** 63n - 1n), true); break;
        case 't': d.setBigUint64(o, bigInteger(v, code, 0n, 2n ** 64n - 1n), true); break;
        case 'd': d.setFloat64(o, v as number, true); break;
      }
      this.length += size;
      return;
    }
    switch (code) {
      case 's': case 'o': {
        const text = v as string;
        // the specification forbids NUL in a string, and dbus-daemon drops a connection that sends one
        if (text.includes('\0')) throw new WireError(`a D-Bus string holds no NUL byte: ${JSON.stringify(text.slice(0, 40))}`);
        const n = Buffer.byteLength(text, 'utf8');
        this.room(4 + n + 1);
        this.view.setUint32(this.length, n, true);
        this.buf.write(text, this.length + 4, n, 'utf8');
        this.length += 4 + n + 1; // and its NUL, zero already
        return;
      }
      case 'g': {
        const text = v as string;
        const n = Buffer.byteLength(text, 'latin1');
        if (n > 255) throw new WireError(`signature too long (${n} bytes)`);
        this.room(1 + n + 1);
        this.buf[this.length] = n;
        this.buf.write(text, this.length + 1, n, 'latin1');
        this.length += 1 + n + 1;
        return;
      }
      default: throw new WireError(`unknown type code "${code}"`);
    }
  }

  /** Pads to `n` (a header ends on 8). */
  pad(n: number): void {
    this.align(n);
  }

  /** `n` zero bytes. */
  zeros(n: number): void {
    this.room(n);
    this.length += n;
  }

  /** Bytes encoded already, as they are. */
  bytes(b: Buffer): void {
    this.room(b.length);
    b.copy(this.buf, this.length);
    this.length += b.length;
  }

  /** Writes `v` as a uint32 at `at`, a place written already (a message's body length). */
  patchUint32(at: number, v: number): void {
    if (at + 4 > this.length) throw new WireError(`no uint32 written at ${at} of ${this.length} bytes`);
    this.view.setUint32(at, integer(v, 'u', 0, 0xffffffff), true);
  }

  /** The bytes written (a view of the writer's buffer: copy it before writing more). */
  toBuffer(): Buffer {
    return this.buf.subarray(0, this.length);
  }
}

/** `v` when it is a whole number from `min` to `max` (a DataView would wrap it silently). */
function integer(v: unknown, code: string, min: number, max: number): number {
  if (typeof v !== 'number' || !Number.isInteger(v) || v < min || v > max) throw new WireError(`"${code}" takes a whole number from ${min} to ${max}, not ${String(v)}`);
  return v;
}

/** `v` as a bigint when it is a whole number from `min` to `max`. */
function bigInteger(v: unknown, code: string, min: bigint, max: bigint): bigint {
  const b = typeof v === 'bigint' ? v : typeof v === 'number' && Number.isInteger(v) ? BigInt(v) : undefined;
  if (b === undefined || b < min || b > max) throw new WireError(`"${code}" takes a whole number from ${min} to ${max}, not ${String(v)}`);
  return b;
}

/** The size of each fixed-size basic type, in bytes. */
const FIXED_SIZE: Record<string, number> = { y: 1, b: 4, n: 2, q: 2, i: 4, u: 4, h: 4, x: 8, t: 8, d: 8 };

export const METHOD_CALL = 1;
export const METHOD_RETURN = 2;
export const ERROR = 3;
export const SIGNAL = 4;

/** Header field codes. */
const FIELD = { path: 1, interface: 2, member: 3, errorName: 4, replySerial: 5, destination: 6, sender: 7, signature: 8 } as const;
/** The fixed part of every header: endianness, type, flags, version, body length, serial, fields. */
const HEADER = parseSignature('yyyyuua(yv)');

export interface MethodCall {
  destination: string;
  path: string;
  interface: string;
  member: string;
  signature?: string;
  body?: unknown[];
}

/** A method call as bytes. */
export function encodeMethodCall(serial: number, call: MethodCall): Buffer {
  return encodeMessage(METHOD_CALL, serial, call, [[FIELD.destination, { signature: 's', value: call.destination }]]);
}

export interface Signal {
  path: string;
  interface: string;
  member: string;
  signature?: string;
  body?: unknown[];
}

/** A signal as bytes (broadcast: no destination; the bus adds the sender). */
export function encodeSignal(serial: number, signal: Signal): Buffer {
  return encodeMessage(SIGNAL, serial, signal, []);
}

/** The header's fields of sbd's signals, encoded once each (from byte 12 to the body), by member,
 * path, interface and signature: the same for every Incident, and half of its encoding before V8
 * compiles it (session 29). */
const signalFields = new Map<string, Buffer>();
/** Signals' header fields kept at most: sbd sends two kinds. */
const SIGNAL_FIELDS_KEPT = 64;

function encodeMessage(type: number, serial: number, m: Signal, more: Array<[number, { signature: string; value: unknown }]>): Buffer {
  // One writer for the whole message: the header with its body's length left 0, padded to 8
  // (the body's offsets then align as from its own start), the body, then its length in place.
  const w = new WireWriter();
  const [y, , , , u] = HEADER as WireType[];
  // no reply expected of a signal (flag 1); a method call's reply is waited for
  for (const v of ['l'.charCodeAt(0), type, type === SIGNAL ? 1 : 0, 1]) w.write(y as WireType, v);
  w.write(u as WireType, 0);
  w.write(u as WireType, serial);
  if (type === SIGNAL && more.length === 0) {
    const key = `${m.member}\0${m.path}\0${m.interface}\0${m.signature ?? ''}`;
    let bytes = signalFields.get(key);
    if (bytes === undefined) {
      bytes = headerFields(m, more);
      if (signalFields.size >= SIGNAL_FIELDS_KEPT) signalFields.clear();
      signalFields.set(key, bytes);
    }
    w.bytes(bytes);
  } else {
    w.bytes(headerFields(m, more));
  }
  const bodyStart = w.length;
  const types = parseSignature(m.signature ?? '');
  types.forEach((t, i) => w.write(t, m.body?.[i]));
  w.patchUint32(4, w.length - bodyStart);
  return w.toBuffer(); // its own buffer: nothing writes to it after
}

/** A header's fields (path, interface, member, `more`, signature) as bytes from the header's
 * byte 12 on, padded to 8 (where the body starts). */
function headerFields(m: Signal, more: Array<[number, { signature: string; value: unknown }]>): Buffer {
  const fields: Array<[number, { signature: string; value: unknown }]> = [
    [FIELD.path, { signature: 'o', value: m.path }],
    [FIELD.interface, { signature: 's', value: m.interface }],
    [FIELD.member, { signature: 's', value: m.member }],
    ...more,
  ];
  if (m.signature) fields.push([FIELD.signature, { signature: 'g', value: m.signature }]);
  const w = new WireWriter();
  w.zeros(12); // as placed in the header, after its fixed 12 bytes: the structs align on 8 from there
  w.write((HEADER as WireType[])[6] as WireType, fields);
  w.pad(8);
  return Buffer.from(w.toBuffer().subarray(12));
}

/** The whole length of the message at the buffer's start, or undefined while its fixed part is incomplete. */
export function messageLength(buf: Buffer): number | undefined {
  if (buf.length < 16) return undefined;
  if (buf[0] !== 0x6c) throw new WireError(`message in byte order "${String.fromCharCode(buf[0] as number)}": only little-endian ("l") is read`);
  const bodyLength = buf.readUInt32LE(4);
  const fieldsLength = buf.readUInt32LE(12);
  return Math.ceil((16 + fieldsLength) / 8) * 8 + bodyLength;
}

export interface Message {
  type: number;
  serial: number;
  replySerial?: number;
  errorName?: string;
  signature: string;
  body: unknown[];
}

/** One whole message (messageLength(buf) bytes) decoded. */
export function decodeMessage(buf: Buffer): Message {
  const r = new WireReader(buf);
  const [y, , , , u, , fieldsType] = HEADER as WireType[];
  r.read(y as WireType);
  const type = r.read(y as WireType) as number;
  r.read(y as WireType);
  r.read(y as WireType);
  const bodyLength = r.read(u as WireType) as number;
  const serial = r.read(u as WireType) as number;
  const fields = r.read(fieldsType as WireType) as Array<[number, { value: unknown }]>;
  const field = (code: number): unknown => fields.find(([c]) => c === code)?.[1].value;
  const signature = (field(FIELD.signature) as string | undefined) ?? '';
  const bodyStart = Math.ceil(r.offset / 8) * 8;
  if (bodyStart + bodyLength > buf.length) throw new WireError(`message truncated: body of ${bodyLength} bytes at ${bodyStart} of ${buf.length}`);
  const br = new WireReader(buf.subarray(0, bodyStart + bodyLength), bodyStart);
  const body = parseSignature(signature).map((t) => br.read(t));
  const replySerial = field(FIELD.replySerial) as number | undefined;
  const errorName = field(FIELD.errorName) as string | undefined;
  return { type, serial, signature, body, ...(replySerial !== undefined ? { replySerial } : {}), ...(errorName !== undefined ? { errorName } : {}) };
}
