/** Byte sizes as systemd writes them: 512M, 4G, 1.5G, 1048576, infinity (base 1024). */

const UNITS: Record<string, number> = { '': 1, K: 2 ** 10, M: 2 ** 20, G: 2 ** 30, T: 2 ** 40 };

/** Parse a size; `undefined` when the text is not one (callers word the error for their context). */
export function parseSize(text: string): number | undefined {
  const t = text.trim();
  if (t === 'infinity') return Infinity;
  const m = /^(\d+(?:\.\d+)?)([KMGT]?)(?:i?B)?$/i.exec(t);
  if (!m) return undefined;
  const bytes = Number(m[1]) * (UNITS[(m[2] ?? '').toUpperCase()] ?? 1);
  return Number.isFinite(bytes) && bytes <= Number.MAX_SAFE_INTEGER ? Math.floor(bytes) : undefined;
}

/** Bytes for people: "64.0M", "1.50G", "infinity". */
export function formatSize(bytes: number): string {
  if (bytes === Infinity) return 'infinity';
  if (!Number.isFinite(bytes)) return '-';
  for (const [suffix, unit] of [['T', 2 ** 40], ['G', 2 ** 30], ['M', 2 ** 20], ['K', 2 ** 10]] as const) {
    if (bytes >= unit) return `${(bytes / unit).toFixed(bytes >= unit * 10 ? 1 : 2)}${suffix}`;
  }
  return `${bytes}B`;
}

/** A duration as written on a command line: "10s", "2m", "1h", "500ms" or plain seconds. */
export function parseDurationS(text: string): number | undefined {
  const m = /^(\d+(?:\.\d+)?)(ms|s|m|h)?$/.exec(text.trim());
  if (!m) return undefined;
  const factor = { ms: 0.001, s: 1, m: 60, h: 3600 }[(m[2] ?? 's') as 'ms' | 's' | 'm' | 'h'];
  return Number(m[1]) * factor;
}
