// @ts-check
'use strict';
// Issue 13: sbd's own notices about a session reach the agent in its terms, with what to do.
const test = require('node:test');
const assert = require('node:assert/strict');
const { noticeFor } = require('../../dist/inbox/from-incident.js');

const at = new Date(2026, 11, 1, 3, 12).getTime();
const base = { unit: 'sb-fix.scope', session: 'fix', atMs: at, message: 'm', observeOnly: false };

test('a stopped build: what, when, why, and how to run it again', () => {
  const n = noticeFor({ ...base, type: 'subtree-stopped', name: 'cc1plus', rssBytes: 3 * 2 ** 30, critical: true });
  assert.equal(n?.kind, 'stopped');
  assert.equal(n?.text, 'your command cc1plus (3.00G) was stopped at 03:12 because the machine was nearly out of memory: if you run it again, use less parallelism or less memory (e.g. make -j2), or split the work');
  assert.match(noticeFor({ ...base, type: 'subtree-stopped', name: 'cc1plus' })?.text ?? '', /no room to raise it/);
  assert.match(noticeFor({ ...base, type: 'stop-finished', name: 'ld', slice: 'nbr.slice' })?.text ?? '', /slice nbr\.slice stood still/);
});

test('a raise is told as nothing to do; observe-only and operator-only incidents are not the agent\'s', () => {
  assert.match(noticeFor({ ...base, type: 'brake-raised', toBytes: 2 ** 30 })?.text ?? '', /raised to 1\.00G at 03:12: .* nothing to do/);
  assert.equal(noticeFor({ ...base, type: 'brake-raised', observeOnly: true }), undefined);
  for (const type of ['standing-still', 'cleared', 'brake-lowered', 'feed-fallback', 'pegged', 'slice-standing-still']) assert.equal(noticeFor({ ...base, type }), undefined, type);
});
