/**
 * A journal entry in the bytes of journald's native protocol (systemd.io/JOURNAL_NATIVE_PROTOCOL),
 * pure: the addon only sends them (native/journal_send.cc). Each field is `KEY=value\n`, or, when
 * the value holds a newline, `KEY\n` + its length as a 64-bit little-endian integer + the value +
 * `\n`. A key may repeat (the journal keeps every value).
 */

/** One field of an entry, in the order it is sent. */
export type JournalField = readonly [name: string, value: string | Buffer];

/** The longest field name journald keeps (journal_field_valid()): a longer one is dropped on arrival, silently. */
export const FIELD_NAME_MAX = 64;

/**
 * Why `name` cannot be a field a client sends, or undefined when it can: uppercase A-Z, digits
 * and `_`, not starting with a digit, not with `_` (those are the journal's own, trusted
 * fields: it drops them from a client), at most 64 characters.
 */
export function fieldNameProblem(name: string): string | undefined {
  if (name.length === 0) return 'a field name is empty';
  if (name.length > FIELD_NAME_MAX) return `the field name ${name} is longer than ${FIELD_NAME_MAX} characters`;
  if (name.startsWith('_')) return `the field name ${name} starts with "_", which only the journal itself may send`;
  if (/^[0-9]/.test(name)) return `the field name ${name} starts with a digit`;
  if (!/^[A-Z0-9_]+$/.test(name)) return `the field name ${JSON.stringify(name)} has a character other than A-Z, 0-9 and "_"`;
  return undefined;
}

/** Names found good already, so that fieldNameProblem's expressions run once per name: sbd sends a
 * few dozen, and every incident sends each again. */
const goodNames = new Set<string>();
/** Names kept found good at most (sbd's own are a few dozen; more start the set afresh). */
const GOOD_NAMES_KEPT = 256;

/** Whether `name` can be a field a client sends (fieldNameProblem finds nothing), remembered. */
export function isFieldName(name: string): boolean {
  if (goodNames.has(name)) return true;
  if (fieldNameProblem(name) !== undefined) return false;
  if (goodNames.size >= GOOD_NAMES_KEPT) goodNames.clear();
  goodNames.add(name);
  return true;
}

/**
 * The entry's bytes, in one buffer. Throws a RangeError naming the first bad field name (nothing
 * is half-encoded). An entry of text fields without a newline, as nearly every incident is, is
 * one string encoded once: written field by field through Buffer's checked writes, it cost about
 * 0.65 ms of the emulated guest's CPU an incident in bench:storm (issue 15, session 29), where
 * the storm's 200 tells run before V8 has compiled them.
 */
export function encodeEntry(fields: readonly JournalField[]): Buffer {
  let text = '';
  for (const [name, raw] of fields) {
    if (!isFieldName(name)) throw new RangeError(`journal entry: ${fieldNameProblem(name) ?? name}`);
    if (typeof raw !== 'string' || raw.includes('\n')) return encodeBinarySafe(fields);
    text += `${name}=${raw}\n`;
  }
  return Buffer.from(text, 'utf8');
}

/** encodeEntry's bytes when a value is a Buffer or holds a newline: NAME\n + 64-bit length + value + \n for those. */
function encodeBinarySafe(fields: readonly JournalField[]): Buffer {
  let size = 0;
  const lengths: number[] = [];
  const binary: boolean[] = [];
  for (const [name, raw] of fields) {
    if (!isFieldName(name)) throw new RangeError(`journal entry: ${fieldNameProblem(name) ?? name}`);
    const n = typeof raw === 'string' ? Buffer.byteLength(raw, 'utf8') : raw.length;
    const withNewline = typeof raw === 'string' ? raw.includes('\n') : raw.includes(0x0a);
    lengths.push(n);
    binary.push(withNewline);
    // NAME=value\n, or NAME\n + 64-bit length + value + \n
    size += name.length + 1 + (withNewline ? 8 : 0) + n + 1;
  }
  const out = Buffer.allocUnsafe(size);
  let o = 0;
  fields.forEach(([name, raw], i) => {
    o += out.write(name, o, 'ascii');
    const n = lengths[i] as number;
    if (binary[i]) {
      out[o++] = 0x0a;
      out.writeBigUInt64LE(BigInt(n), o);
      o += 8;
    } else {
      out[o++] = 0x3d; // =
    }
    o += typeof raw === 'string' ? out.write(raw, o, n, 'utf8') : raw.copy(out, o);
    out[o++] = 0x0a;
  });
  return out;
}
