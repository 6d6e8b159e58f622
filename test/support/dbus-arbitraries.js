// @ts-check
'use strict';
// fast-check arbitraries of D-Bus values for the wire format's property tests (status-fast,
// bus-signals): one value of each basic type, within what dbus-next 0.10.2 itself writes and reads
// (no infinite double, no least int64, no -0, no dict key its object check trips on), with text
// in any Unicode but NUL, which no D-Bus string may hold.
const fc = require('fast-check');

/** The signature of basicValues(): a struct of every basic type. */
const BASIC_STRUCT = '(ybnqiuxtdsog)';

/** Text as a D-Bus string may hold it: any Unicode graphemes, no NUL. */
const text = (/** @type {{maxLength?: number, minLength?: number}} */ o = {}) => fc.string({ unit: 'grapheme', ...o }).filter((s) => !s.includes('\0'));

/** A dict key dbus-next's object check takes. */
const dictKey = () => text({ minLength: 1 }).filter((k) => k !== 'constructor' && k !== '__proto__');

/** One value of each basic type, in BASIC_STRUCT's order. */
const basicValues = () => fc.tuple(
  fc.integer({ min: 0, max: 255 }), fc.boolean(), fc.integer({ min: -32768, max: 32767 }), fc.integer({ min: 0, max: 65535 }),
  fc.integer({ min: -(2 ** 31), max: 2 ** 31 - 1 }), fc.integer({ min: 0, max: 2 ** 32 - 1 }),
  fc.bigInt({ min: -(2n ** 63n) + 1n, max: 2n ** 63n - 1n }), fc.bigInt({ min: 0n, max: 2n ** 64n - 1n }),
  fc.double({ noNaN: true, noDefaultInfinity: true }).filter((d) => !Object.is(d, -0)), text({ maxLength: 300 }),
  fc.constantFrom('/', '/dev/sessionbrake/Manager1', '/a/b_c'), fc.constantFrom('', 's', 'a{sv}', '(ssstssttttddu(sut)t)'),
);

module.exports = { BASIC_STRUCT, basicValues, dictKey, text };
