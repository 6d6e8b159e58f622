// @ts-check
'use strict';
// Incidents as structured journal entries: the fixed fields, one MESSAGE_ID per type, and each
// figure as a field named for what it means. The incidents below have the shapes their tellers
// give them (controller.ts, slice-controller.ts, freeze-watch.ts, leftovers.ts, oom/watch.ts).
const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const path = require('node:path');
const { incidentEntry, figureFields, fieldNameOf } = require('../../../dist/journal/incident-entry.js');
const { MESSAGE_IDS } = require('../../../dist/journal/message-ids.js');
const { incidentLevel } = require('../../../dist/daemon/incidents.js');
const { syslogPriority } = require('../../../dist/daemon/log.js');
const { encodeEntry } = require('../../../dist/journal/encode.js');

const MiB = 2 ** 20;
const base = (type, extra = {}) => ({ type, unit: 'build1.scope', session: 'build1', atMs: 1_764_540_000_000, message: `a ${type}`, observeOnly: false, ...extra });
/** The entry as an object; a repeated name would show as a list. */
const asObject = (fields) => {
  const o = {};
  for (const [k, v] of fields) o[k] = k in o ? [].concat(o[k], v) : v;
  return o;
};
const figures = (i) => asObject(figureFields(i));

test('every incident type has its own fixed MESSAGE_ID: 32 lowercase hex digits, none shared', () => {
  const types = ['standing-still', 'brake-raised', 'no-room', 'will-stop', 'subtree-stopped', 'stop-finished', 'nothing-to-stop', 'oom-kill', 'cleared', 'brake-lowered', 'feed-fallback', 'deadline-dropped', 'procs-reaped', 'leftovers', 'pegged', 'missing', 'silent', 'recovered', 'slice-standing-still', 'slice-brake-raised', 'slice-cleared', 'culprit', 'machine-short'];
  assert.deepEqual(Object.keys(MESSAGE_IDS).sort(), [...types].sort());
  for (const id of Object.values(MESSAGE_IDS)) assert.match(id, /^[0-9a-f]{32}$/);
  assert.equal(new Set(Object.values(MESSAGE_IDS)).size, types.length);
  assert.equal(MESSAGE_IDS['subtree-stopped'], '6442e5c022af415d9e7032b8ff0e0980', 'an id never changes: operators query it');
});

test('docs/journal.md lists every MESSAGE_ID with its incident type, as the code has them', () => {
  const doc = fs.readFileSync(path.join(__dirname, '../../../docs/journal.md'), 'utf8');
  for (const [type, id] of Object.entries(MESSAGE_IDS)) {
    assert.match(doc, new RegExp(`^\\| \`${id}\` \\| \`${type}\` \\|`, 'm'), `a table row for ${type}`);
  }
});

test('the fixed fields: MESSAGE, MESSAGE_ID, PRIORITY, SYSLOG_IDENTIFIER, INCIDENT, SESSION, UNIT, USER_UNIT', () => {
  const entry = incidentEntry(base('cleared', { message: 'clear again (share 0.01)' }), 6);
  assert.deepEqual(entry, [
    ['MESSAGE', 'clear again (share 0.01)'],
    ['MESSAGE_ID', '97a98d5900bb4b24a6121beeb6986111'],
    ['PRIORITY', '6'],
    ['SYSLOG_IDENTIFIER', 'sbd'],
    ['INCIDENT', 'cleared'],
    ['SESSION', 'build1'],
    ['UNIT', 'build1.scope'],
    ['USER_UNIT', 'build1.scope'],
  ]);
  assert.deepEqual(incidentEntry(base('cleared', { observeOnly: true }), 6).at(-1), ['OBSERVE_ONLY', '1']);
});

test('PRIORITY is the log level\'s syslog priority, as the stdout line has it: warn 4, info 6', () => {
  assert.equal(incidentLevel('subtree-stopped'), 'warn');
  assert.equal(incidentLevel('brake-raised'), 'info');
  assert.equal(syslogPriority('warn'), 4);
  assert.equal(syslogPriority('info'), 6);
  assert.equal(syslogPriority('error'), 3);
});

test('will-stop (its own brake): program, pids, RSS, the brake, the evidence', () => {
  const i = base('will-stop', { name: 'python3', pids: [402, 401], rssBytes: 310 * MiB, brakeBytes: 64 * MiB, sparedGit: [], protectedPids: [300, 350], evidence: ['near-own-brake', 'alone-in-slice'], share: 0.87345, anonShare: 0.5 });
  assert.deepEqual(figures(i), {
    PROGRAM: 'python3', PIDS: '402 401', RSS_BYTES: String(310 * MiB), BRAKE_BYTES: String(64 * MiB), PROTECTED_PIDS: '300 350',
    EVIDENCE: 'near-own-brake alone-in-slice', SHARE: '0.873', ANON_SHARE: '0.5',
  }, 'an empty list (no git spared) is not sent');
});

test('subtree-stopped: what was signalled and how each ended; STOPPED_PIDS is what sbd ended', () => {
  const figuresOfStop = { name: 'python3', pids: [402, 401], rssBytes: 310 * MiB, brakeBytes: 64 * MiB, sparedGit: [403], protectedPids: [300], evidence: ['near-own-brake'], share: 0.9, anonShare: 0.8 };
  const report = { name: 'python3', terminated: [401], killed: [402], skipped: [], survived: [], brakeLowered: true };
  const f = figures(base('subtree-stopped', { ...figuresOfStop, ...report }));
  assert.equal(f.STOPPED_PIDS, '401 402');
  assert.equal(f.TERMINATED_PIDS, '401');
  assert.equal(f.KILLED_PIDS, '402');
  assert.equal(f.SPARED_GIT_PIDS, '403');
  assert.equal(f.BRAKE_PUT_BACK, '1');
  assert.equal(f.RSS_BYTES, String(310 * MiB));
  assert.equal(f.BRAKE_BYTES, String(64 * MiB));
  assert.equal(f.EVIDENCE, 'near-own-brake');
  assert.equal(f.SKIPPED_PIDS, undefined);
});

test('a stop of a slice\'s culprit: SLICE, CAUSE, RULE, REASON, CRITICAL, growth and fair share', () => {
  const why = { slice: 'sessions.slice', cause: 'slice-brake', critical: false, rule: 'grew-most', why: 'b.scope grew most since the episode began: +300 MiB', growthBytes: 300 * MiB, fairShareBytes: 128 * MiB };
  const f = figures(base('will-stop', { name: 'node', pids: [9], rssBytes: MiB, brakeBytes: Infinity, sparedGit: [], protectedPids: [], ...why }));
  assert.deepEqual([f.SLICE, f.CAUSE, f.CRITICAL, f.RULE, f.REASON, f.GROWTH_BYTES, f.FAIR_SHARE_BYTES, f.BRAKE_BYTES],
    ['sessions.slice', 'slice-brake', '0', 'grew-most', 'b.scope grew most since the episode began: +300 MiB', String(300 * MiB), String(128 * MiB), 'infinity']);
});

test('standing-still: SHARE, ANON_SHARE, EVIDENCE, DEADLINE_S', () => {
  assert.deepEqual(figures(base('standing-still', { share: 0.62, anonShare: 0.4, evidence: ['own-high-moved', 'near-own-brake'], deadlineS: 120 })),
    { SHARE: '0.62', ANON_SHARE: '0.4', EVIDENCE: 'own-high-moved near-own-brake', DEADLINE_S: '120' });
  assert.deepEqual(figures(base('standing-still', { share: undefined, anonShare: undefined, evidence: [], deadlineS: 0 })), { DEADLINE_S: '0' }, 'what is absent is not sent');
});

test('brake-raised and brake-lowered: BRAKE_BYTES is the brake now, BRAKE_FROM_BYTES the one before', () => {
  assert.deepEqual(figures(base('brake-raised', { fromBytes: 64 * MiB, toBytes: 96 * MiB, limitedBy: 'step', currentBytes: 63 * MiB })),
    { BRAKE_FROM_BYTES: String(64 * MiB), BRAKE_BYTES: String(96 * MiB), LIMITED_BY: 'step', CURRENT_BYTES: String(63 * MiB) });
  assert.deepEqual(figures(base('brake-lowered', { fromBytes: 96 * MiB, toBytes: 64 * MiB })), { BRAKE_FROM_BYTES: String(96 * MiB), BRAKE_BYTES: String(64 * MiB) });
});

test('slice-standing-still: the slice\'s figures, and its members one a line (sent binary-safe)', () => {
  const members = [
    { path: 'a.scope', currentBytes: 100 * MiB, growthBytes: 0, fairShareBytes: 128 * MiB },
    { path: 'b.scope', currentBytes: 400 * MiB, growthBytes: 300 * MiB, fairShareBytes: 128 * MiB },
  ];
  const i = base('slice-standing-still', { unit: 'sessions.slice', session: 'sessions.slice', cause: 'slice-brake', currentBytes: 500 * MiB, highBytes: 512 * MiB, maxBytes: Infinity, memAvailableBytes: 900 * MiB, members, culprit: 'b.scope', rule: 'grew-most', why: 'b.scope grew most', deadlineS: 60 });
  const f = figures(i);
  assert.equal(f.MEMBERS, `a.scope current_bytes=${100 * MiB} growth_bytes=0 fair_share_bytes=${128 * MiB}\nb.scope current_bytes=${400 * MiB} growth_bytes=${300 * MiB} fair_share_bytes=${128 * MiB}`);
  assert.deepEqual([f.CAUSE, f.CURRENT_BYTES, f.BRAKE_BYTES, f.MEMORY_MAX_BYTES, f.MEM_AVAILABLE_BYTES, f.CULPRIT, f.RULE, f.DEADLINE_S],
    ['slice-brake', String(500 * MiB), String(512 * MiB), 'infinity', String(900 * MiB), 'b.scope', 'grew-most', '60']);
  const bytes = encodeEntry(incidentEntry(i, 4));
  assert.ok(bytes.includes(Buffer.from('\nMEMBERS\n')), 'the multi-line value in the binary-safe form');
  assert.ok(!bytes.includes(Buffer.from('MEMBERS=')));
});

test('culprit and machine-short', () => {
  assert.deepEqual(figures(base('culprit', { slice: 'sessions.slice', cause: 'machine', rule: 'above-fair-share', growthBytes: 0, currentBytes: 700 * MiB, fairShareBytes: 256 * MiB, deadlineS: 30 })),
    { SLICE: 'sessions.slice', CAUSE: 'machine', RULE: 'above-fair-share', GROWTH_BYTES: '0', CURRENT_BYTES: String(700 * MiB), FAIR_SHARE_BYTES: String(256 * MiB), DEADLINE_S: '30' });
  const f = figures(base('machine-short', { cause: 'machine', memAvailableBytes: 40 * MiB, culprit: 'b.scope', rule: 'grew-most', members: [] }));
  assert.deepEqual(f, { CAUSE: 'machine', MEM_AVAILABLE_BYTES: String(40 * MiB), CULPRIT: 'b.scope', RULE: 'grew-most' });
});

test('oom-kill: the count, who the kernel killed (pid and program), where, and the cgroup\'s figures', () => {
  const i = base('oom-kill', { count: 1, kills: [{ pid: 77, comm: 'python3', oomMemcg: '/user.slice/x/build1.scope', taskMemcg: '/user.slice/x/build1.scope', anonRssBytes: 900 * MiB, atUs: 5 }], currentBytes: 10 * MiB, highBytes: 512 * MiB, maxBytes: 1024 * MiB, peakBytes: 1000 * MiB, events: { low: 0, high: 12, max: 3, oom: 1, oom_kill: 1 }, eventsLocal: { oom_kill: 1 } });
  assert.deepEqual(figures(i), {
    OOM_KILLS: '1', OOM_KILLED_PIDS: '77', OOM_KILLED_PROGRAMS: 'python3', OOM_MEMCG: '/user.slice/x/build1.scope',
    CURRENT_BYTES: String(10 * MiB), BRAKE_BYTES: String(512 * MiB), MEMORY_MAX_BYTES: String(1024 * MiB), PEAK_BYTES: String(1000 * MiB),
    MEMORY_EVENTS: 'low=0 high=12 max=3 oom=1 oom_kill=1', MEMORY_EVENTS_LOCAL: 'oom_kill=1',
  });
  assert.deepEqual(figures(base('oom-kill', { count: 2, kills: [], kernelLog: '/dev/kmsg: EPERM (kernel.dmesg_restrict=1)' })), { OOM_KILLS: '2', KERNEL_LOG_PROBLEM: '/dev/kmsg: EPERM (kernel.dmesg_restrict=1)' });
});

test('procs-reaped and leftovers: every pid, what sbd stopped, their RSS, one process a line', () => {
  const procs = [
    { pid: 10, program: 'esbuild', rssBytes: 30 * MiB, cpuS: 1, ageS: 5, outcome: 'terminated' },
    { pid: 11, program: 'vite', rssBytes: 20 * MiB, cpuS: 1, ageS: 5, outcome: 'killed' },
    { pid: 12, program: 'bash', rssBytes: MiB, cpuS: 0, ageS: 9, outcome: 'spared', why: 'the caller of sbctl' },
  ];
  assert.deepEqual(figures(base('procs-reaped', { startedAtMs: 123, procs })), {
    PIDS: '10 11 12', STOPPED_PIDS: '10 11', RSS_BYTES: String(51 * MiB), PROCESSES: '10 esbuild terminated\n11 vite killed\n12 bash spared',
  }, 'a wall-clock start is not sent: the journal stamps the entry');
  const left = figures(base('leftovers', { procs: procs.map((p) => ({ ...p, outcome: 'would stop' })) }));
  assert.equal(left.STOPPED_PIDS, undefined);
  assert.equal(left.PROCESSES, '10 esbuild would stop\n11 vite would stop\n12 bash would stop');
});

test('freeze incidents: kinds still open, the agent\'s pid and CPU, the heartbeat\'s age, the commands by name', () => {
  assert.deepEqual(figures(base('pegged', { open: ['pegged', 'silent'], agentPid: 300, agentCpuMin: 12.3, heartbeatAgeS: null, commandsOpen: ['node', 'Web Content'], reminder: true })),
    { FREEZE_KINDS: 'pegged silent', AGENT_PID: '300', AGENT_CPU_MIN: '12.3', COMMANDS_OPEN: 'node, Web Content', REMINDER: '1' }, 'null (unknown) is not sent');
  assert.deepEqual(figures(base('recovered', { was: ['pegged', 'missing'] })), { RECOVERED_FROM: 'pegged missing' });
});

test('stop-finished: the report, and (observe-only) the saved stop\'s pids; a monotonic due time is not sent', () => {
  assert.deepEqual(figures(base('stop-finished', { name: 'make', terminated: [], killed: [5], skipped: [6], survived: [], brakeLowered: false, brakeBytes: 64 * MiB, killDueAtMs: 99 })),
    { PROGRAM: 'make', KILLED_PIDS: '5', SKIPPED_PIDS: '6', BRAKE_PUT_BACK: '0', BRAKE_BYTES: String(64 * MiB), STOPPED_PIDS: '5' });
  assert.deepEqual(figures(base('stop-finished', { observeOnly: true, name: 'make', processes: [{ pid: 5, startTicks: 1, uid: 1000 }, { pid: 6, startTicks: 2, uid: 1000 }], killDueAtMs: 99, brakeBytes: 64 * MiB })),
    { PROGRAM: 'make', PIDS: '5 6', BRAKE_BYTES: String(64 * MiB) });
});

test('a figure the mapping does not know: sent under its own name when plain, dropped when not', () => {
  assert.equal(fieldNameOf('fairShareBytes'), 'FAIR_SHARE_BYTES');
  assert.equal(fieldNameOf('heartbeatAgeS'), 'HEARTBEAT_AGE_S');
  assert.deepEqual(figures(base('no-room', { newFigureBytes: 5, nested: { a: 1 }, listOfRecords: [{ a: 1 }], flag: false })), { NEW_FIGURE_BYTES: '5', FLAG: '0' });
});

test('never a command line: figures that could hold one are not sent, and no name is sent twice', () => {
  const i = base('will-stop', { argv: ['node', '--token=s3cret'], cmdline: 'node --token=s3cret', args: ['--token=s3cret'], name: 'node', pids: [1], rssBytes: 1, brakeBytes: 2, message: 'm' });
  const entry = incidentEntry(i, 4);
  assert.ok(!JSON.stringify(entry).includes('s3cret'));
  const names = entry.map(([n]) => n);
  assert.equal(new Set(names).size, names.length);
  // A figure whose name the journal would drop is left out, not sent to fail the whole entry.
  assert.equal(incidentEntry(base('cleared', { ['x'.repeat(70)]: 1 }), 6).some(([n]) => n.length > 64), false);
});
