#!/usr/bin/env node
// @ts-check
'use strict';
// Shows that each rule of the stall detector has a test that fails without it: removes the
// rules one at a time from a copy of dist/stall/detector.js and runs test/unit/stall against
// each mutant. Prints one line per rule; exits 1 if any mutant survives.
//   npm run build:ts && node scripts/mutate-detector.js
const fs = require('node:fs');
const path = require('node:path');
const { spawnSync } = require('node:child_process');

const root = path.resolve(__dirname, '..');
const file = path.join(root, 'dist/stall/detector.js');
const original = fs.readFileSync(file, 'utf8');
/** rule -> [what the compiled code says, what it says without the rule] */
const MUTANTS = {
  'anon fuse': ['const fuseHolds = anonShare >= cfg.anonFuse;', 'const fuseHolds = true;'],
  'its own doing': ['if (evidence.length === 0)', 'if (false)'],
  'near its own brake': ['if (b.highBytes !== Infinity && b.currentBytes >= cfg.nearOwnBrake * b.highBytes)', 'if (false)'],
  'alone in the slice': ['if (b.unitsInSlice <= 1)', 'if (false)'],
  'two hot windows': ['s.hotWindows >= (onset ? cfg.onsetHotWindows : cfg.hotWindowsToStall))', 's.hotWindows >= 1)'],
  'three hot onset windows': ['(onset ? cfg.onsetHotWindows : cfg.hotWindowsToStall)', '(onset ? 2 : cfg.hotWindowsToStall)'],
  'two hot steady windows': ['(onset ? cfg.onsetHotWindows : cfg.hotWindowsToStall)', '(onset ? cfg.onsetHotWindows : 1)'],
  'onset windows are the short ones': ['const nominalMs = (onset ? cfg.onsetWindowS : cfg.windowS) * 1000;', 'const nominalMs = cfg.windowS * 1000;'],
  'clear line': ['if (share < cfg.clearShare)', 'if (share < 0)'],
  'trip line': ['if (share >= cfg.tripShare)', 'if (share >= 0)'],
  'warm keeps the count': ["else if (w.kind === 'clear')", 'else'],
  'a clear window ends the deadline': ["        if (w.kind === 'clear') {", '        if (false) {'],
  'deadline expiry': ['if (now >= s.deadline.endsAtMs)', 'if (false)'],
  'doubled grace on fallback': ["(sample.measure === 'fallback' ? exports.FALLBACK_GRACE_FACTOR : 1)", '1'],
  'progress by a drop': ['if (s.deadline.currentAtStart - sample.currentBytes >= cfg.progressDrop)', 'if (false)'],
  'near MemoryMax ends the deadline': ['if (nearMemoryMax(sample, cfg))', 'if (false)'],
  'near MemoryMax only over the brake': ['m.currentBytes > m.highBytes && m.maxBytes', 'true && m.maxBytes'],
  'mute after lowering': ['if (now < s.mutedUntilMs)', 'if (false)'],
  'new cgroup': ['if (sample.pressureFullUs < last.pressureFullUs || sample.ownHighEvents < last.ownHighEvents)', 'if (false)'],
  'short window': ['if (sample.atMs - last.atMs < nominalMs / 2)', 'if (false)'],
  'fallback growth limit': ['if (grewBytes >= limit)', 'if (false)'],
  'fallback warm keeps the deadline': ["return { ...base, kind: 'warm', share: undefined", "return { ...base, kind: 'clear', share: undefined"],
};
let survivors = 0;
try {
  for (const [rule, [from, to]] of Object.entries(MUTANTS)) {
    if (!original.includes(from)) throw new Error(`the compiled detector no longer says ${JSON.stringify(from)}: update ${rule}`);
    fs.writeFileSync(file, original.replace(from, to));
    const env = { ...process.env };
    delete env.NODE_TEST_CONTEXT;
    const r = spawnSync(process.execPath, ['--test', '--test-reporter=tap', path.join(root, 'test/unit/stall')], { encoding: 'utf8', env });
    const failed = Number(/^# fail (\d+)/m.exec(r.stdout)?.[1] ?? 0);
    console.log(`${failed > 0 ? 'caught  ' : 'SURVIVED'} ${rule}: ${failed} failing test(s)`);
    if (failed === 0) survivors++;
  }
} finally {
  fs.writeFileSync(file, original);
}
console.log(survivors === 0 ? 'every rule is guarded by a test' : `${survivors} rule(s) have no test that fails without them`);
process.exit(survivors === 0 ? 0 : 1);
