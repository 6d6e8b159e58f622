// @ts-check
'use strict';
// Issue 11, agent by pid: the registry says whether a session's agentPid is known (sbctl run's
// record) or inferred (the root of its tree), so that only an inferred agent keeps the namesake
// rule when sbd chooses what to stop (victim/choose.ts).
const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { SessionRegistry } = require('../../../dist/sessions/registry.js');
const { writeRecord } = require('../../../dist/sessions/record.js');

const unit = (name) => ({
  unit: name, invocationId: 'a'.repeat(32), controlGroup: `/nonexistent-sb-test/${name}`, slice: 'sessions.slice', activeState: 'active',
  memoryHigh: 1 << 28, memoryMax: Infinity, memorySwapMax: Infinity,
});

test('registry: agentFromRecord is true only for a session sbctl run recorded', async () => {
  const records = fs.mkdtempSync(path.join(os.tmpdir(), 'sb-records-'));
  writeRecord(records, { unit: 'rec.scope', id: 'rec', agentPid: 4242, agentStartTicks: 7, createdAtMs: 0 });
  const units = new Map([['rec.scope', unit('rec.scope')], ['bare.scope', unit('bare.scope')]]);
  const m = { listLiveUnits: async () => [...units.keys()], getUnit: async (u) => units.get(u), onUnitEvent: () => {} };
  const r = new SessionRegistry(/** @type {any} */ (m), ['sessions.slice'], records);
  await r.start();
  assert.equal(r.get('rec.scope')?.agentFromRecord, true);
  assert.equal(r.get('rec.scope')?.agentPid, 4242);
  assert.equal(r.get('bare.scope')?.agentFromRecord, false, 'no record: the agent (if any) is inferred');
});
