/**
 * `sbctl install [--now]` / `sbctl uninstall`: the user units, written to the user's unit
 * directory from units/, then Reload, EnableUnitFiles and StartUnit over D-Bus. The unit runs the
 * sbd of the copy this sbctl belongs to (its real path): an npm install, or a checkout.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { UserManager } from '../systemd/types';
import { xdgHome } from '../util/xdg';

/** The real path of this copy's root (dist/cli/ is two levels below it): ~/.local/bin/sbctl is a symlink. */
const projectRoot = fs.realpathSync(path.resolve(__dirname, '..', '..'));
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

/**
 * Where the unit runs sbd from, said once it is written: an npm install (a package directory
 * in node_modules/, as `npm install -g` lays it out) stays put across upgrades; a checkout is
 * wherever it was cloned, and sbd breaks when it moves.
 */
export function describeSource(root: string, node: string): string[] {
  const entry = path.join(root, 'dist', 'daemon', 'main.js');
  if (path.basename(path.dirname(root)) === 'node_modules') {
    return [`${SERVICE_UNIT} runs ${entry} (installed by npm) with ${node}`];
  }
  return [
    `${SERVICE_UNIT} runs ${entry} from the checkout ${root}, with ${node}:`,
    `moving or removing this checkout breaks sbd; run \`sbctl install --now\` again from its new place,`,
    'or install a packed copy (npm pack; npm install -g ./sessionbrake-*.tgz) and run its `sbctl install --now`',
  ];
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
  for (const line of describeSource(projectRoot, process.execPath)) say(line);
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
