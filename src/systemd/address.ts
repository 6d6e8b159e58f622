/**
 * Where the user bus is. dbus-next only reads DBUS_SESSION_BUS_ADDRESS and otherwise tries X11
 * (design.md §9), so the address is always worked out here and passed to it.
 */

export class NoUserBusError extends Error {
  constructor() {
    super(
      'no user bus: neither DBUS_SESSION_BUS_ADDRESS nor XDG_RUNTIME_DIR is set. Run as the user who ' +
        'owns the sessions, in a login session or with lingering enabled (loginctl enable-linger), ' +
        'or set DBUS_SESSION_BUS_ADDRESS=unix:path=/run/user/$UID/bus',
    );
    this.name = 'NoUserBusError';
  }
}

/** The user bus address from the environment: the explicit address, else $XDG_RUNTIME_DIR/bus. */
export function userBusAddress(env: NodeJS.ProcessEnv): string {
  const explicit = env.DBUS_SESSION_BUS_ADDRESS;
  if (explicit !== undefined && explicit !== '') return explicit;
  const runtime = env.XDG_RUNTIME_DIR;
  if (runtime !== undefined && runtime !== '') return `unix:path=${runtime}/bus`;
  throw new NoUserBusError();
}
