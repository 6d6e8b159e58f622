// @ts-check
'use strict';
// Whether a guest's console says its kernel panicked (test/vm/suite.test.js boots such a guest
// once more): the panic's own line, or undefined. Pure: the console's text in, no files.

/** The kernel's panic line ("Kernel panic - not syncing: …"), without its timestamp. */
function bootPanicOf(consoleText) {
  const m = /^(?:\[\s*[\d.]+\]\s*)?(Kernel panic - not syncing:.*)$/m.exec(consoleText);
  return m ? m[1].trim() : undefined;
}

module.exports = { bootPanicOf };
