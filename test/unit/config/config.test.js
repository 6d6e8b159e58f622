// @ts-check
'use strict';
const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { parseConfig, loadConfig, ConfigError, defaultConfigPath } = require('../../../dist/config/load.js');
const { parseSize, formatSize } = require('../../../dist/util/size.js');

test('an empty config gives every default of design.md', () => {
  const c = parseConfig({}, 'c.json');
  assert.deepEqual(c.slices, ['sessions.slice']);
  assert.equal(c.detector.tripShare, 0.2);
  assert.equal(c.detector.clearShare, 0.1);
  assert.equal(c.detector.hotWindowsToStall, 2);
  assert.equal(c.detector.anonFuse, 0.9);
  assert.equal(c.detector.nearOwnBrake, 0.95);
  assert.equal(c.detector.graceS, 180);
  assert.equal(c.detector.progressDrop, 64 * 2 ** 20);
  assert.equal(c.detector.muteAfterLowerS, 240);
  assert.equal(c.stop.termToKillS, 30);
  assert.equal(c.reap.termToKillS, 10);
  assert.deepEqual(c.freeze, { peggedCpuShare: 0.75, peggedForS: 300, missingAfterS: 180, silentAfterS: 1800, reminderS: 3600, checkS: 60 });
  assert.equal(c.observeOnly, false);
});

test('sizes in the config may be written as systemd writes them', () => {
  const c = parseConfig({ raise: { step: '512M', reserve: '2G', ceiling: 'infinity' }, detector: { progressDrop: 1048576 } }, 'c.json');
  assert.equal(c.raise.step, 512 * 2 ** 20);
  assert.equal(c.raise.reserve, 2 * 2 ** 30);
  assert.equal(c.raise.ceiling, Infinity);
  assert.equal(c.detector.progressDrop, 1048576);
});

test('raise.maxMargin: 128 MiB below MemoryMax by default (measured), a size when set', () => {
  assert.equal(parseConfig({}, 'c.json').raise.maxMargin, 128 * 2 ** 20);
  assert.equal(parseConfig({ raise: { maxMargin: '256M' } }, 'c.json').raise.maxMargin, 256 * 2 ** 20);
  assert.equal(parseConfig({ raise: { step: '512M' } }, 'c.json').raise.maxMargin, 128 * 2 ** 20, 'the default also when the raise block is partly set');
  assert.throws(() => parseConfig({ raise: { maxMargin: 'lots' } }, 'c.json'), { name: 'ConfigError', message: 'c.json: key "raise.maxMargin": expected a size such as "512M", "4G" or a number of bytes; found "lots"' });
});

test('a bad config names the file, the key, what was expected and what was found', () => {
  const cases = [
    [{ detector: { tripShare: 2 } }, 'c.json: key "detector.tripShare": expected a value at most 1; found 2'],
    [{ raise: { step: '12Q' } }, 'c.json: key "raise.step": expected a size such as "512M", "4G" or a number of bytes; found "12Q"'],
    [{ detector: { graceS: 'soon' } }, 'c.json: key "detector.graceS": expected a number; found "soon"'],
    [{ slices: ['bad name'] }, 'c.json: key "slices.0": expected a slice unit name such as "sessions.slice"; found "bad name"'],
    [{ detectr: {} }, 'c.json: unknown key "detectr" (misspelt?)'],
    [{ notifyCommand: 'notify-send "$X"' }, 'c.json: key "notifyCommand": expected a list; found "notify-send \\"$X\\""'],
  ];
  for (const [raw, message] of cases) assert.throws(() => parseConfig(raw, 'c.json'), { name: 'ConfigError', message });
});

test('files: a missing default file means defaults; a named missing file, bad JSON are errors', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sb-config-'));
  const missing = path.join(dir, 'config.json');
  assert.equal(loadConfig(missing, false).detector.graceS, 180);
  assert.throws(() => loadConfig(missing, true), { message: `${missing}: cannot read it (ENOENT)` });
  fs.writeFileSync(missing, '{"observeOnly": tru}');
  assert.throws(() => loadConfig(missing, true), (err) => err instanceof ConfigError && err.message.startsWith(`${missing}: not valid JSON`));
  fs.writeFileSync(missing, '{"observeOnly": true}');
  assert.equal(loadConfig(missing, true).observeOnly, true);
  assert.equal(defaultConfigPath({ XDG_CONFIG_HOME: '/x' }), '/x/sessionbrake/config.json');
});

test('sizes: parse and format', () => {
  assert.equal(parseSize('512M'), 536870912);
  assert.equal(parseSize('4G'), 4294967296);
  assert.equal(parseSize('1.5K'), 1536);
  assert.equal(parseSize('100'), 100);
  assert.equal(parseSize('64MiB'), 67108864);
  assert.equal(parseSize('infinity'), Infinity);
  assert.equal(parseSize('-1M'), undefined);
  assert.equal(parseSize('lots'), undefined);
  assert.equal(formatSize(67108864), '64.0M');
  assert.equal(formatSize(1610612736), '1.50G');
  assert.equal(formatSize(Infinity), 'infinity');
});

test('logLevel: info by default, any of pino\'s levels, anything else named (issue 12, fault 9)', () => {
  assert.equal(parseConfig({}, 'c.json').logLevel, 'info');
  assert.equal(parseConfig({ logLevel: 'debug' }, 'c.json').logLevel, 'debug');
  assert.throws(() => parseConfig({ logLevel: 'loud' }, 'c.json'), /c\.json: key "logLevel": expected one of fatal, error, warn, info, debug, trace; found "loud"/);
});

test('sbd --log-level: a level outside the choices is refused with exit code 2, naming the choices', () => {
  const { spawnSync } = require('node:child_process');
  const r = spawnSync(process.execPath, [path.join(__dirname, '../../../dist/daemon/main.js'), '--log-level', 'loud'], { encoding: 'utf8' });
  assert.equal(r.status, 2);
  assert.match(r.stderr, /--log-level.*loud.*fatal, error, warn, info, debug, trace/s);
});
