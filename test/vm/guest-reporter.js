// @ts-check
'use strict';
// node:test reporter used INSIDE the guest (node --test --test-reporter=./test/vm/guest-reporter.js):
// one JSON line per event, read back by suite.test.js on the host.
//   {"sbvm":"test","event":"pass"|"fail"|"skip"|"todo","name","nesting","file","type","durationMs",
//    "skip"?: reason, "error"?: {message, stack, failureType, code}}
//   {"sbvm":"output","stream":"stdout"|"stderr","message"}   (what the test files printed)
//   {"sbvm":"diagnostic","message"}                           (the runner's summary lines)

/** @param {any} err */
function serializeError(err) {
  if (!err) return undefined;
  // node wraps what a test threw in ERR_TEST_FAILURE; the thrown value is err.cause
  const cause = err.code === 'ERR_TEST_FAILURE' && err.cause !== undefined ? err.cause : err;
  const isObj = typeof cause === 'object' && cause !== null;
  return {
    message: isObj ? String(cause.message ?? cause) : String(cause),
    stack: isObj && typeof cause.stack === 'string' ? cause.stack : undefined,
    failureType: err.failureType,
    code: isObj ? cause.code : undefined,
  };
}

/** @param {AsyncIterable<{type: string, data: any}>} source */
module.exports = async function* guestReporter(source) {
  for await (const { type, data } of source) {
    /** @type {Record<string, unknown> | undefined} */
    let line;
    if (type === 'test:pass' || type === 'test:fail') {
      const event = type === 'test:fail' ? 'fail' : data.skip !== undefined ? 'skip' : data.todo !== undefined ? 'todo' : 'pass';
      line = {
        sbvm: 'test', event, name: data.name, nesting: data.nesting, file: data.file,
        type: data.details?.type ?? 'test', durationMs: data.details?.duration_ms,
        skip: typeof data.skip === 'string' ? data.skip : data.skip ? '' : undefined,
        todo: typeof data.todo === 'string' ? data.todo : data.todo ? '' : undefined,
        error: type === 'test:fail' ? serializeError(data.details?.error) : undefined,
      };
    } else if (type === 'test:stdout' || type === 'test:stderr') {
      line = { sbvm: 'output', stream: type.slice(5), message: data.message };
    } else if (type === 'test:diagnostic') {
      line = { sbvm: 'diagnostic', message: data.message };
    }
    if (line) yield JSON.stringify(line) + '\n';
  }
};
