// @ts-check
'use strict';
// A real dbus-daemon on a socket of our own (host tests and bench:status): a private session bus
// that lets anyone own names and call anything, torn down with stop().
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { spawn } = require('node:child_process');

/** @returns {Promise<{ address: string, stop: () => void }>} */
async function privateBus() {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sb-bus-'));
  const conf = path.join(dir, 'bus.conf');
  fs.writeFileSync(conf, `<!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN" "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
<busconfig><type>session</type><listen>unix:path=${dir}/bus</listen><auth>EXTERNAL</auth>
<policy context="default"><allow send_destination="*" eavesdrop="true"/><allow eavesdrop="true"/><allow own="*"/></policy></busconfig>`);
  const daemon = spawn('dbus-daemon', ['--config-file', conf, '--nofork', '--print-address'], { stdio: ['ignore', 'pipe', 'ignore'] });
  const address = await new Promise((resolve, reject) => {
    daemon.once('error', reject);
    daemon.stdout.once('data', (d) => resolve(String(d).trim()));
  });
  return { address: /** @type {string} */ (address), stop: () => { daemon.kill(); fs.rmSync(dir, { recursive: true, force: true }); } };
}

module.exports = { privateBus };
