// @ts-check
'use strict';
// Issue 13, the monitors' lifecycle against the real user manager: a crash-looping spawn is
// quarantined by systemd's start limit, `recover approve` gives it a fresh start of its unit and
// `recover reject` removes it; an expiresAt a few seconds ahead ends a tail and a spawn (the spawn
// is not restarted by Restart=on-failure); sbd restarted (stop, a line written, start) and then
// killed -9: the spawn is never replayed (the same InvocationID and MainPID), the tail resumes at
// its offset (the line written while sbd was down told once, nothing told twice), one summary line
// per start; stop --all refuses without --confirm; gc archives the records of an ended session.
// sbctl's monitor commands are called in this process over the bus (dist/cli/monitor.js, what
// sbctl runs): a node start per call costs seconds under TCG; sbctl itself is run where its exit
// code is the point (stop --all, gc --apply).
const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { spawnSync } = require('node:child_process');
const dbus = require('dbus-next');
const { labOnly, waitFor } = require('./helpers');
const { startSbd, runSession, sbctl, systemctl } = require('./sbd-helpers');

const root = path.resolve(__dirname, '../../..');
const { readInbox, inboxDir } = require(path.join(root, 'dist/inbox/store.js'));
const { loadRecords, monitorsDir } = require(path.join(root, 'dist/monitor/store.js'));
const cli = require(path.join(root, 'dist/cli/monitor.js'));
const { queryService } = require(path.join(root, 'dist/cli/status.js'));

const SESSION = 'rst1';
const json = (r) => {
  assert.equal(r.status, 0, `sbctl: ${r.stderr}`);
  return JSON.parse(r.stdout);
};
/** @type {import('dbus-next').MessageBus} */
let bus;
const env = { ...process.env, SESSIONBRAKE_SESSION: SESSION };
/** One of sbctl's monitor commands in this process; its --json answer. */
async function mon(f, ...args) {
  /** @type {string[]} */
  const out = [];
  const code = await f(bus, ...args, (l) => out.push(l));
  assert.equal(code, 0);
  return JSON.parse(out.join('\n'));
}
const start = (spec) => mon(cli.monitorStart, undefined, spec, true, env);
const sessions = async () => (await queryService(bus))?.sessions.map((s) => s.name) ?? [];
const notices = () => readInbox(inboxDir(), SESSION);
const records = () => new Map(loadRecords(monitorsDir()).records.map((r) => [r.id, r]));
const show = (unit, prop) => systemctl('show', '-P', prop, unit).stdout.trim();
const sbdPid = () => Number(show('sbd.service', 'MainPID'));
/** sbd's summary lines since `sinceS` (epoch seconds), one per start. */
const summaries = (sinceS) => spawnSync('journalctl', ['--user', '-u', 'sbd.service', '--no-pager', '-o', 'cat', '--since', `@${sinceS}`], { encoding: 'utf8' })
  .stdout.split('\n').filter((l) => l.includes('monitors after the restart')).map((l) => JSON.parse(l.replace(/^<\d>/, '')).msg);
/** A new sbd (not `before`) answers. */
const answered = (before) => waitFor(async () => {
  const pid = sbdPid();
  return pid !== 0 && pid !== before && (await queryService(bus)) !== undefined && pid;
}, 90_000, { intervalMs: 500, what: 'the restarted sbd to answer' });

test('monitors through recover, expiry, and sbd restarted and killed -9', labOnly, async (t) => {
  const began = performance.now();
  const phase = (what) => t.diagnostic(`${what} at +${((performance.now() - began) / 1000).toFixed(1)} s`);
  await startSbd({});
  bus = dbus.sessionBus({ busAddress: /** @type {string} */ (process.env.DBUS_SESSION_BUS_ADDRESS) });
  t.after(() => bus.disconnect());
  const session = runSession(SESSION, ['--memory-high', '256M'], ['sleep', '900']);
  const home = os.homedir();
  const log = path.join(home, 'rst1-build.log');
  const starts = path.join(home, 'rst1-starts');
  fs.writeFileSync(log, '');
  fs.rmSync(starts, { force: true });
  t.after(() => { systemctl('stop', `${SESSION}.scope`); session.child.kill(); fs.rmSync(log, { force: true }); fs.rmSync(starts, { force: true }); });
  await waitFor(async () => (await sessions()).includes(SESSION), 60_000, { what: `sbd to watch ${SESSION}` });
  const node = process.execPath;
  const common = ['--session', SESSION, '--json'];
  const spawnOf = (label, script, more = {}) => start({ type: 'spawn', label, argv: [node, '-e', script], ...more });

  // two that expire in a few seconds
  const expiresAt = new Date(Date.now() + 15_000).toISOString();
  const shortTail = await start({ type: 'tail', label: 'short-tail', path: path.join(home, 'rst1-other.log'), expiresAt });
  const shortSpawn = await spawnOf('short-spawn', 'setInterval(() => {}, 1000)', { expiresAt });
  const shortUnit = `sb-monitor-${shortSpawn.id}.service`;
  // what the restarts follow: a spawn printing a line every second, and a tail
  const ticker = await spawnOf('ticker', "let n = 0; setInterval(() => console.log('tick ' + ++n), 1000)", { notifyOn: ['^tick'], coalesceSeconds: 1, maxLines: 50 });
  const tickerUnit = `sb-monitor-${ticker.id}.service`;
  const tail = await start({ type: 'tail', label: 'log', path: log, notifyOn: ['^LINE'], coalesceSeconds: 0 });
  // the crash loops: one that comes up at its 4th start, one that never does. A shell, not node:
  // the fuse is 3 starts in 60 s, and under a loaded emulator node alone took 20 s to start (CI,
  // 2026-12-02), so a node loop never reached three in a minute and was restarted for ever
  const mended = await start({ type: 'spawn', label: 'mended', argv: ['/bin/sh', '-c', `n=$(($(cat ${starts} 2>/dev/null || echo 0) + 1)); echo $n > ${starts}; [ $n -ge 4 ] || exit 3; echo "UP at start $n"; exec sleep 900`], notifyOn: ['^UP'], coalesceSeconds: 0 });
  const broken = await start({ type: 'spawn', label: 'broken', argv: ['/bin/sh', '-c', 'exit 4'] });

  fs.appendFileSync(log, 'LINE 1 before the restarts\n');
  await waitFor(() => notices().some((n) => n.from === tail.handle && n.lines?.includes('LINE 1 before the restarts')), 30_000, { what: 'LINE 1 told' });

  phase('monitors started');
  await t.test('a crash loop is quarantined; approve gives it a fresh start, reject removes it', async () => {
    await waitFor(() => { const r = records(); return r.get(mended.id)?.lifecycle === 'quarantined' && r.get(broken.id)?.lifecycle === 'quarantined'; }, 90_000, { intervalMs: 500, what: 'both crash loops quarantined' });
    const waiting = await mon(cli.monitorRecoverList, undefined, true, env);
    assert.deepEqual(waiting.map((w) => w.handle).sort(), [mended.handle, broken.handle].sort(), 'recover lists what waits');
    assert.match(waiting[0].reason, /crashed again and again/);
    const failedInvocation = show(`sb-monitor-${mended.id}.service`, 'InvocationID');
    assert.deepEqual(json(sbctl('monitor', 'recover', 'approve', ...common, mended.handle)), { handle: mended.handle, lifecycle: 'running' }, 'as sbctl');
    const mendedUnit = `sb-monitor-${mended.id}.service`;
    await waitFor(() => notices().some((n) => n.from === mended.handle && n.lines?.some((l) => /^UP at start 4$/.test(l))), 60_000, { what: 'the approved spawn to come up' });
    assert.equal(show(mendedUnit, 'ActiveState'), 'active');
    assert.notEqual(show(mendedUnit, 'InvocationID'), failedInvocation, 'a fresh start of its unit');
    assert.equal(show(mendedUnit, 'NRestarts'), '0', 'its start-limit count was reset');

    const rejected = await mon(cli.monitorRecover, 'reject', undefined, broken.handle, true, env);
    assert.equal(rejected.lifecycle, 'rejected');
    assert.ok(fs.existsSync(rejected.archivedTo), `its record archived (${rejected.archivedTo})`);
    assert.equal(records().has(broken.id), false);
    assert.equal(show(`sb-monitor-${broken.id}.service`, 'LoadState'), 'not-found', 'its failed unit is gone');
    assert.equal((await mon(cli.monitorList, undefined, false, true, env)).some((m) => m.id === broken.id), false);
    assert.deepEqual(await mon(cli.monitorRecoverList, undefined, true, env), []);
  });

  phase('recover done');
  await t.test('expiresAt ends a tail and a spawn, told once each; the spawn is not restarted', async () => {
    await waitFor(() => { const r = records(); return r.get(shortTail.id)?.lifecycle === 'expired' && r.get(shortSpawn.id)?.lifecycle === 'expired'; }, 60_000, { intervalMs: 500, what: 'both to expire' });
    for (const m of [shortTail, shortSpawn]) assert.ok((records().get(m.id)?.endedAtMs ?? 0) >= Date.parse(expiresAt), `${m.handle} ended at its expiresAt, not before`);
    await new Promise((r) => setTimeout(r, 3000)); // Restart= would have started it again by now (RestartSec 2 s)
    assert.notEqual(show(shortUnit, 'ActiveState'), 'active', 'the expired spawn stays stopped');
    for (const m of [shortTail, shortSpawn]) assert.equal(notices().filter((n) => n.from === m.handle && n.kind === 'expired').length, 1, `${m.handle}: one notice`);
  });

  phase('expiry done');
  await t.test('sbd restarted, then killed -9: the spawn lives on, the tail resumes at its offset, one summary line per start', async () => {
    const sinceS = Math.floor(Date.now() / 1000);
    const unitBefore = { invocation: show(tickerUnit, 'InvocationID'), pid: show(tickerUnit, 'MainPID') };
    assert.notEqual(unitBefore.pid, '0');
    const firstOwner = (await mon(cli.monitorInspect, undefined, ticker.handle, true, env)).owner;

    // stopped, a line written while it is down, started
    const pid1 = sbdPid();
    assert.equal(systemctl('stop', 'sbd.service').status, 0);
    fs.appendFileSync(log, 'LINE 2 while sbd was stopped\n');
    assert.equal(systemctl('start', 'sbd.service').status, 0);
    const pid2 = await answered(pid1);
    await waitFor(() => notices().some((n) => n.from === tail.handle && n.lines?.includes('LINE 2 while sbd was stopped')), 30_000, { what: 'LINE 2 told after the restart' });

    // killed -9, a line written before systemd starts it again (RestartSec 2 s)
    process.kill(pid2, 'SIGKILL');
    fs.appendFileSync(log, 'LINE 3 while sbd was killed\n');
    await answered(pid2);
    await waitFor(() => notices().some((n) => n.from === tail.handle && n.lines?.includes('LINE 3 while sbd was killed')), 30_000, { what: 'LINE 3 told after the kill' });
    fs.appendFileSync(log, 'LINE 4 after\n');
    await waitFor(() => notices().some((n) => n.from === tail.handle && n.lines?.includes('LINE 4 after')), 30_000, { what: 'LINE 4 told' });

    assert.deepEqual({ invocation: show(tickerUnit, 'InvocationID'), pid: show(tickerUnit, 'MainPID') }, unitBefore, 'the spawn was never replayed');
    const receipt = await mon(cli.monitorInspect, undefined, ticker.handle, true, env);
    assert.equal(receipt.lifecycle, 'running');
    assert.equal(receipt.unit.invocationId, unitBefore.invocation);
    assert.equal(String(receipt.unit.mainPid), unitBefore.pid, 'inspect reads the main pid from systemd');
    assert.notEqual(receipt.owner.epochMs, firstOwner.epochMs, 'the lease passed to the new sbd');
    assert.deepEqual(receipt.signalsSent, []);

    const told = notices().filter((n) => n.from === tail.handle).flatMap((n) => n.lines ?? []);
    assert.deepEqual(told, ['LINE 1 before the restarts', 'LINE 2 while sbd was stopped', 'LINE 3 while sbd was killed', 'LINE 4 after'], 'each line told once, in order');
    const tickNotices = notices().filter((n) => n.monitor === ticker.id);
    const ticks = tickNotices.flatMap((n) => n.lines ?? []);
    const twice = tickNotices.flatMap((n) => (n.lines ?? []).filter((l) => ticks.indexOf(l) !== ticks.lastIndexOf(l)).map((l) => `${l} (notice ${n.id}, through ${n.through})`));
    assert.ok(ticks.length > 0, 'the ticker\'s notices carry its id');
    assert.deepEqual(twice, [], 'no tick of the spawn told twice');

    const lines = summaries(sinceS);
    t.diagnostic(lines.join(' | '));
    assert.equal(lines.length, 2, 'one summary line per start');
    for (const l of lines) assert.match(l, /^monitors after the restart: 1 resumed, 2 reused/, 'the tail resumed; the ticker and the approved spawn reused');
  });

  phase('restarts done');
  await t.test('stop --all refuses without --confirm; gc archives what an ended session left', async () => {
    const refused = sbctl('monitor', 'stop', '--all', ...common);
    assert.equal(refused.status, 2);
    assert.deepEqual(JSON.parse(refused.stdout).wouldStop.map((m) => m.handle).sort(), [ticker.handle, tail.handle, mended.handle].sort());
    assert.equal(show(tickerUnit, 'ActiveState'), 'active', 'nothing stopped');
    /** @type {string[]} */
    const out = [];
    assert.equal(await cli.monitorStopAll(bus, undefined, true, true, env, (l) => out.push(l), () => {}), 0);
    const stopped = JSON.parse(out.join(''));
    assert.deepEqual(stopped.stopped.map((s) => s.lifecycle), ['stopped', 'stopped', 'stopped']);
    await waitFor(() => show(tickerUnit, 'ActiveState') !== 'active', 30_000, { what: 'the ticker to stop' });

    systemctl('stop', `${SESSION}.scope`);
    await waitFor(async () => !(await sessions()).includes(SESSION), 60_000, { what: `${SESSION} to end` });
    const dry = await mon(cli.monitorGc, false, true);
    // the expired ones were compacted at sbd's first restart, the rejected one archived
    const mine = dry.entries.filter((e) => [ticker.id, tail.id, mended.id].includes(e.id));
    assert.equal(mine.length, 3, `its three records are orphans: ${JSON.stringify(dry.entries)}`);
    assert.ok(mine.every((e) => e.kind === 'orphan' && e.archivedTo === null));
    assert.ok(records().has(ticker.id), 'a dry run archives nothing');
    const applied = await mon(cli.monitorGc, true, true);
    assert.ok(applied.entries.filter((e) => e.kind === 'orphan').every((e) => e.archivedTo && fs.existsSync(e.archivedTo)));
    assert.equal(records().has(ticker.id), false);
  });
  phase('done');
});
