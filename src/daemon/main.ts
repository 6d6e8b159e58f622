#!/usr/bin/env node
/**
 * sbd: the sessionbrake service. Run by systemd as a user unit (units/sbd.service).
 * Exit codes: 0 stopped by a signal, 1 lost the bus or failed, 2 bad config or arguments.
 */
import { Command, CommanderError, Option } from 'commander';
import { ConfigError, defaultConfigPath, loadConfig } from '../config/load';
import { type Config, LOG_LEVELS } from '../config/schema';
import { userBusAddress } from '../systemd/address';
import { connectBus } from '../systemd/user-manager';
import { addonBuiltBy, addonPath } from '../native';
import { VERSION } from '../version';
import { createLogger } from './log';
import { startService } from './service';

async function main(argv: string[]): Promise<void> {
  const program = new Command('sbd')
    .description('The sessionbrake service: watches the sessions of your systemd user manager and keeps them from standing still against their memory brakes.')
    .option('-c, --config <file>', `config file (default: ${defaultConfigPath()})`)
    .option('--observe-only', 'log and show every verdict and would-be action; change nothing')
    .addOption(new Option('--log-level <level>', 'log level, overriding the config\'s logLevel (debug logs every window)').choices(LOG_LEVELS))
    .version(VERSION)
    .exitOverride()
    .configureOutput({ writeErr: (s) => process.stderr.write(s) });
  try {
    program.parse(argv);
  } catch (err) {
    if (err instanceof CommanderError) process.exit(err.exitCode === 0 ? 0 : 2);
    throw err;
  }
  const opts = program.opts<{ config?: string; observeOnly?: boolean; logLevel?: Config['logLevel'] }>();
  const log = createLogger();

  let config;
  try {
    config = loadConfig(opts.config ?? defaultConfigPath(), opts.config !== undefined);
  } catch (err) {
    if (err instanceof ConfigError) {
      log.fatal({ event: 'bad-config', file: err.file }, err.message);
      process.stderr.write(`sbd: bad config: ${err.message}\n`);
      process.exit(2);
    }
    throw err;
  }
  if (opts.observeOnly) config.observeOnly = true;
  if (opts.logLevel) config.logLevel = opts.logLevel;
  log.level = config.logLevel;
  // Which copy runs and which build of the addon it loaded (an npm install builds with node-gyp,
  // a checkout with cmake-js): the first thing to know when a unit runs an unexpected copy.
  const addonBuild = addonBuiltBy();
  log.info({ event: 'starting', version: VERSION, entry: __filename, addon: addonPath, addonBuild }, `sbd ${VERSION} starting: ${__filename}, addon ${addonPath} (${addonBuild} build)`);

  const bus = await connectBus(userBusAddress(process.env));
  bus.on('error', (err: unknown) => {
    // dbus-next never reconnects: exit, and systemd's Restart=on-failure starts us anew.
    log.fatal({ event: 'bus-lost', err }, 'lost the user bus; exiting');
    process.exit(1);
  });
  const service = await startService(config, bus, log, process.env);
  for (const sig of ['SIGTERM', 'SIGINT'] as const) {
    process.once(sig, () => {
      log.info({ event: 'stopping', signal: sig }, 'sbd stopping');
      service.stop();
      bus.disconnect();
      process.exit(0);
    });
  }
}

main(process.argv).catch((err: unknown) => {
  process.stderr.write(`sbd: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
});
