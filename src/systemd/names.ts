/** Unit names and their D-Bus object paths (pure). */

/**
 * systemd's object path for a unit: every byte outside [A-Za-z0-9], and a leading digit, becomes
 * `_xx` (lower-case hex), as sd_bus_path_encode does: "a-b.scope" -> ".../unit/a_2db_2escope".
 */
export function unitObjectPath(unit: string): string {
  let out = '';
  const bytes = Buffer.from(unit, 'utf8');
  bytes.forEach((b, i) => {
    const alnum = (b >= 0x30 && b <= 0x39) || (b >= 0x41 && b <= 0x5a) || (b >= 0x61 && b <= 0x7a);
    const leadingDigit = i === 0 && b >= 0x30 && b <= 0x39;
    out += alnum && !leadingDigit ? String.fromCharCode(b) : `_${b.toString(16).padStart(2, '0')}`;
  });
  return `/org/freedesktop/systemd1/unit/${out === '' ? '_' : out}`;
}

/** The inverse of unitObjectPath, for paths seen in signals. Undefined for non-unit paths. */
export function unitFromObjectPath(objectPath: string): string | undefined {
  const prefix = '/org/freedesktop/systemd1/unit/';
  if (!objectPath.startsWith(prefix)) return undefined;
  const label = objectPath.slice(prefix.length);
  if (label === '_' || label.includes('/')) return label === '_' ? '' : undefined;
  return Buffer.from(
    label.replace(/_([0-9a-f]{2})/g, (_, hex: string) => String.fromCharCode(parseInt(hex, 16))),
    'latin1',
  ).toString('utf8');
}

/** The session id (SESSIONBRAKE_SESSION value) of a unit: its name without the suffix. */
export function sessionId(unit: string): string {
  return unit.replace(/\.(scope|service)$/, '');
}

/** Characters systemd accepts in a unit name's prefix (unit_name_is_valid). */
const UNIT_NAME = /^[A-Za-z0-9:_.\\@-]+\.(scope|service|slice)$/;

/** True for a name systemd accepts for a scope, service or slice (at most 255 bytes). */
export function isValidUnitName(name: string): boolean {
  return name.length <= 255 && UNIT_NAME.test(name);
}
