/**
 * `sbctl install [--now]` / `sbctl uninstall`: the user units, written to the user's unit
 * directory from units/, then Reload, EnableUnitFiles and StartUnit over D-Bus.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { UserManager } from '../systemd/types';
import { xdgHome } from '../util/xdg';

const projectRoot = path.resolve(__dirname, '..', '..');
export const SERVICE_UNIT = 'sbd.service';
export const SLICE_UNIT = 'sessions.slice';

/** ~/.config/systemd/user, or under $XDG_CONFIG_HOME. */
export function userUnitDir(env: NodeJS.ProcessEnv): string {
  return path.join(xdgHome('config', env), 'systemd', 'user');
}

/** A unit file from units/ with @NODE@ and @ROOT@ filled in (pure apart from reading the template). */
export function renderUnit(name: string, node: string, root: string = projectRoot): string {
  return fs.readFileSync(path.join(root, 'units', name), 'utf8').replaceAll('@NODE@', node).replaceAll('@ROOT@', root);
}

export async function install(manager: UserManager, env: NodeJS.ProcessEnv, now: boolean, say: (line: string) => void): Promise<void> {
  const dir = userUnitDir(env);
  fs.mkdirSync(dir, { recursive: true });
  for (const name of [SERVICE_UNIT, SLICE_UNIT]) {
    const file = path.join(dir, name);
    fs.writeFileSync(`${file}.tmp`, renderUnit(name, process.execPath));
    fs.renameSync(`${file}.tmp`, file);
    say(`wrote ${file}`);
  }
  await manager.reload();
  await manager.enableUnitFiles([SERVICE_UNIT]);
  say(`enabled ${SERVICE_UNIT} (starts with your user manager)`);
  if (now) {
    // A restart when it runs already, so that a new version takes over.
    const unit = await manager.getUnit(SERVICE_UNIT);
    if (unit?.activeState === 'active') await manager.restartUnit(SERVICE_UNIT);
    else await manager.startUnit(SERVICE_UNIT);
    say(`started ${SERVICE_UNIT}: see sbctl status`);
  }
}

export async function uninstall(manager: UserManager, env: NodeJS.ProcessEnv, say: (line: string) => void): Promise<void> {
  const unit = await manager.getUnit(SERVICE_UNIT);
  if (unit && unit.activeState !== 'inactive') {
    await manager.stopUnit(SERVICE_UNIT);
    say(`stopped ${SERVICE_UNIT}`);
  }
  await manager.disableUnitFiles([SERVICE_UNIT]);
  const dir = userUnitDir(env);
  for (const name of [SERVICE_UNIT, SLICE_UNIT]) {
    const file = path.join(dir, name);
    if (fs.existsSync(file)) {
      fs.rmSync(file);
      say(`removed ${file}`);
    }
  }
  await manager.reload();
  say('running sessions are left as they are');
}
