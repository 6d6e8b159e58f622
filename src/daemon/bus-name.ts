/** sbd's own name, object and interface on the user bus (design.md §2). */
export const SERVICE_NAME = 'dev.sessionbrake.Manager1';
export const SERVICE_PATH = '/dev/sessionbrake/Manager1';
export const SERVICE_INTERFACE = 'dev.sessionbrake.Manager1';
