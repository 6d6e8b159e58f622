/** Decoding of systemd property values as dbus-next delivers them (pure). */

/** systemd's "infinity" for a uint64 limit (CGROUP_LIMIT_MAX). */
export const UINT64_MAX = 0xffff_ffff_ffff_ffffn;

/** A uint64 byte limit as a number; CGROUP_LIMIT_MAX as Infinity. */
export function limitFromBus(v: bigint): number {
  return v === UINT64_MAX ? Infinity : Number(v);
}

/** A byte limit for the bus: Infinity as CGROUP_LIMIT_MAX. */
export function limitToBus(bytes: number): bigint {
  if (bytes === Infinity) return UINT64_MAX;
  if (!Number.isInteger(bytes) || bytes < 0) throw new RangeError(`not a byte count: ${bytes}`);
  return BigInt(bytes);
}

/** InvocationID (ay, 16 bytes) as the 32 hex digits journalctl shows. */
export function invocationIdFromBus(v: Buffer | Uint8Array | number[]): string {
  return Buffer.from(v as Uint8Array).toString('hex');
}
