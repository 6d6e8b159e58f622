/** Where the config file is, apart from reading it (sbctl names it in its help without loading the schema). */
import * as path from 'node:path';
import { xdgHome } from '../util/xdg';

/** ~/.config/sessionbrake/config.json, or under $XDG_CONFIG_HOME. */
export function defaultConfigPath(env: NodeJS.ProcessEnv = process.env): string {
  return path.join(xdgHome('config', env), 'sessionbrake', 'config.json');
}
