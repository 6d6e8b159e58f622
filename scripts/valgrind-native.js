#!/usr/bin/env node
// @ts-check
'use strict';
// Memory checking of the addon, two ways, each test file run in-process:
//  1. AddressSanitizer + LeakSanitizer: the addon rebuilt with -fsanitize=address,undefined
//     into build-asan/, loaded by a stock node with libasan preloaded. Every addon test file (not
//     the loader's or node-gyp's).
//  2. valgrind memcheck against the normal build: the files valgrind can run. Debian 12's
//     valgrind 3.19 does not know pidfd_open (it answers ENOSYS), so pidfd runs under ASan only.
// A run fails when a test fails, on any sanitizer error, or on an invalid access or a definite
// leak with a stack frame in the addon. Node's and V8's own findings (JIT code, one-time
// allocations kept until exit) are counted and printed, not judged: they are not ours to fix.
//
//   npm run test:memcheck
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { spawnSync } = require('node:child_process');
const { buildEnv } = require('./node-dir.js');

const root = path.resolve(__dirname, '..');
const testFile = (name) => path.join(root, 'test/native', `${name}.test.js`);
const OURS = /sessionbrake\.node|native\/[a-z_]+\.(cc|h)\b/;
let failed = 0;
// Under `node --test`, a child test file would otherwise report to the parent in its binary
// protocol instead of TAP.
const childEnv = { ...process.env };
delete childEnv.NODE_TEST_CONTEXT;

function summary(stdout) {
  return stdout.split('\n').filter((l) => /^not ok|^# (pass|fail)/.test(l)).join('; ');
}

function runAsan() {
  const build = spawnSync(process.execPath, [require.resolve('cmake-js/bin/cmake-js'), 'compile', '-O', 'build-asan', '--CDSB_SANITIZE=ON'], { cwd: root, encoding: 'utf8', env: buildEnv() });
  if (build.status !== 0) throw new Error(`ASan build failed:\n${build.stdout}\n${build.stderr}`);
  const libasan = spawnSync('gcc', ['-print-file-name=libasan.so'], { encoding: 'utf8' }).stdout.trim();
  for (const name of ['pidfd', 'file-watch', 'psi-trigger', 'sd-notify', 'journal-send']) {
    const r = spawnSync(process.execPath, ['--expose-gc', '--test-reporter=tap', testFile(name)], {
      encoding: 'utf8',
      maxBuffer: 64 << 20,
      env: {
        ...childEnv,
        LD_PRELOAD: libasan,
        SESSIONBRAKE_ADDON: path.join(root, 'build-asan/Release/sessionbrake.node'),
        // Node keeps allocations until exit on purpose: report leaks, judge them here.
        ASAN_OPTIONS: 'detect_leaks=1:halt_on_error=1',
        LSAN_OPTIONS: 'exitcode=0',
        UBSAN_OPTIONS: 'halt_on_error=1:print_stacktrace=1',
      },
    });
    const leaks = r.stderr.split(/\n(?=(?:Direct|Indirect) leak)/).filter((b) => b.startsWith('Direct leak'));
    const ours = leaks.filter((b) => OURS.test(b));
    const sanitizerErrors = r.stderr.split('\n').filter((l) => /ERROR: AddressSanitizer|runtime error:/.test(l));
    const ok = r.status === 0 && /# fail 0/.test(r.stdout) && ours.length === 0 && sanitizerErrors.length === 0;
    console.log(`asan ${name}: ${summary(r.stdout)}; ${sanitizerErrors.length} sanitizer errors; definite leaks ${leaks.length} in all, ${ours.length} in the addon`);
    for (const e of [...sanitizerErrors, ...ours]) console.log(e);
    if (!ok) failed++;
  }
}

function runValgrind() {
  if (spawnSync('valgrind', ['--version']).status !== 0) {
    console.log('valgrind: not installed (apt-get install valgrind); ASan results above stand alone');
    failed++;
    return;
  }
  for (const name of ['file-watch', 'psi-trigger', 'sd-notify', 'journal-send']) {
    const xml = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'sb-vg-')), 'report.xml');
    const r = spawnSync(
      'valgrind',
      ['--tool=memcheck', '--leak-check=full', '--show-leak-kinds=definite', '--xml=yes', `--xml-file=${xml}`,
        '--num-callers=40', process.execPath, '--expose-gc', '--test-reporter=tap', testFile(name)],
      { encoding: 'utf8', maxBuffer: 64 << 20, env: childEnv },
    );
    const report = fs.existsSync(xml) ? fs.readFileSync(xml, 'utf8') : '';
    const errors = [...report.matchAll(/<error>([\s\S]*?)<\/error>/g)].map((m) => m[1]);
    const ours = errors.filter((e) => OURS.test(e));
    const ok = r.status === 0 && /# fail 0/.test(r.stdout) && ours.length === 0;
    console.log(`valgrind ${name}: ${summary(r.stdout)}; findings ${errors.length} in all, ${ours.length} in the addon`);
    for (const e of ours) console.log(e.replace(/<[^>]+>/g, ' '));
    if (!ok) failed++;
  }
}

runAsan();
runValgrind();
console.log(failed === 0 ? 'memcheck: no invalid access and no definite leak in the addon' : `memcheck: ${failed} run(s) failed`);
process.exit(failed === 0 ? 0 : 1);
