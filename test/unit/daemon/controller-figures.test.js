// @ts-check
'use strict';
// The figures a standing-still incident tells are what the config says: the deadline's seconds to
// the millisecond. The deadline's end minus now on the monotonic clock (fractional ms) gave
// 19.999999999999986 for a 20 s grace, which guest 39-nopsi compared with 20 and failed on in CI.
const test = require('node:test');
const assert = require('node:assert/strict');
const { BrakeController } = require('../../../dist/daemon/controller.js');
const { parseConfig } = require('../../../dist/config/load.js');
const { initialState } = require('../../../dist/stall/detector.js');

test('standing-still tells deadlineS to the millisecond, not the float noise of the clock\'s arithmetic', () => {
  const told = [];
  const controller = new BrakeController({
    config: parseConfig({ raise: { enabled: false } }, 'test'),
    manager: /** @type {any} */ ({ setMemory: async () => {} }),
    incidents: /** @type {any} */ ({ tell: (i) => told.push(i) }),
    sessions: () => [],
    save: () => {},
    log: () => {},
  });
  const session = /** @type {any} */ ({ unit: 'w.scope', id: 'w', memoryHigh: 64 * 2 ** 20, memoryMax: Infinity, cgroupDir: '/nonexistent' });
  const feed = /** @type {any} */ ({ state: initialState(), setState() {} });
  const remaining = (8379168.902094492 + 20000) - 8379168.902094492; // as the monotonic clock's sums come out: 19999.99999999907
  assert.notEqual(remaining / 1000, 20, 'the arithmetic really is off');
  controller.onVerdict(session, feed, /** @type {any} */ ({ event: 'standing-still', state: 'standing-still', explain: 'test', deadlineRemainingMs: remaining, window: { kind: 'hot', share: 0.5, anonShare: 1, evidence: [] } }), /** @type {any} */ ({ highBytes: 64 * 2 ** 20, currentBytes: 64 * 2 ** 20 }));
  assert.equal(told[0]?.type, 'standing-still');
  assert.equal(told[0].deadlineS, 20);
  controller.forget('w.scope');
});
