#!/usr/bin/env node
// @ts-check
'use strict';
// The top self-time functions of a V8 CPU profile (`node --cpu-prof`), as a Markdown table.
// Usage: node bench/profile-top.js FILE.cpuprofile [N]   (N rows, default 15)
const fs = require('node:fs');
const path = require('node:path');

/**
 * Self time per function (name, file and line), summed over the profile's nodes, largest first.
 * Each sample is charged to its node for the time until the next sample.
 * @param {{nodes: Array<{id: number, callFrame: {functionName: string, url: string, lineNumber: number}}>, samples: number[], timeDeltas: number[], startTime: number, endTime: number}} profile
 * @returns {{totalMs: number, rows: Array<{fn: string, where: string, selfMs: number}>}}
 */
function selfTimes(profile) {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  /** @type {Map<string, {fn: string, where: string, selfMs: number}>} */
  const rows = new Map();
  const { samples, timeDeltas } = profile;
  for (let i = 0; i < samples.length; i++) {
    // the time a sample stands for is the gap to the next one (the last: to the profile's end)
    const us = i + 1 < samples.length ? timeDeltas[i + 1] : Math.max(0, profile.endTime - (profile.startTime + timeDeltas.slice(0, i + 1).reduce((a, b) => a + b, 0)));
    const node = byId.get(samples[i]);
    if (!node) continue;
    const { functionName, url, lineNumber } = node.callFrame;
    const fn = functionName || '(anonymous)';
    const where = url ? `${shortUrl(url)}:${lineNumber + 1}` : '';
    const key = `${fn}\u0000${where}`;
    const row = rows.get(key) ?? { fn, where, selfMs: 0 };
    row.selfMs += us / 1000;
    rows.set(key, row);
  }
  return { totalMs: (profile.endTime - profile.startTime) / 1000, rows: [...rows.values()].sort((a, b) => b.selfMs - a.selfMs) };
}

/**
 * Self time by where it was spent (pure): "module loading" when any frame of the sample's stack is
 * Node's module loader (require: stat, read, compile), else the innermost frame that has a file:
 * a package of node_modules, a folder of sbd's dist/ ("dist/sessions"), or Node's own code; and
 * V8's "(garbage collector)", "(idle)", "(program)". Largest first, in ms.
 * @param {Parameters<typeof selfTimes>[0] & {nodes: Array<{children?: number[]}>}} profile
 * @returns {Array<{origin: string, ms: number}>}
 */
function byOrigin(profile) {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  /** @type {Map<number, number>} */
  const parent = new Map();
  for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  /** @type {Map<number, string>} */
  const originOf = new Map();
  const classify = (/** @type {number} */ id) => {
    const known = originOf.get(id);
    if (known !== undefined) return known;
    let inner;
    for (let at = /** @type {number | undefined} */ (id); at !== undefined; at = parent.get(at)) {
      const { url, functionName } = /** @type {any} */ (byId.get(at)).callFrame;
      if (url.startsWith('node:internal/modules/')) {
        inner = 'module loading';
        break;
      }
      if (inner === undefined && url) inner = originOfUrl(url);
      if (inner === undefined && at === id && /^\(.*\)$/.test(functionName)) inner = functionName;
    }
    const origin = inner ?? '(native, no file)';
    originOf.set(id, origin);
    return origin;
  };
  /** @type {Map<string, number>} */
  const ms = new Map();
  for (let i = 0; i < profile.samples.length; i++) {
    const us = i + 1 < profile.samples.length ? profile.timeDeltas[i + 1] : 0;
    const o = classify(profile.samples[i]);
    ms.set(o, (ms.get(o) ?? 0) + us / 1000);
  }
  return [...ms].map(([origin, t]) => ({ origin, ms: t })).sort((a, b) => b.ms - a.ms);
}

/** A file's origin: "node_modules/PKG", "dist/FOLDER", or "node" for Node's own code. */
function originOfUrl(url) {
  const u = url.replace(/^file:\/\//, '');
  const nm = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(u);
  if (nm) return `node_modules/${nm[1]}`;
  const dist = /\/dist\/([^/]+)\//.exec(u);
  if (dist) return `dist/${dist[1]}`;
  if (/\/dist\/[^/]+$/.test(u)) return 'dist';
  return u.startsWith('node:') ? 'node' : path.basename(u);
}

/** A url with what locates it and nothing else: node_modules/pkg/..., dist/..., or the file's base name. */
function shortUrl(url) {
  const u = url.replace(/^file:\/\//, '');
  const nm = u.lastIndexOf('node_modules/');
  if (nm >= 0) return u.slice(nm + 'node_modules/'.length);
  const dist = u.lastIndexOf('/dist/');
  if (dist >= 0) return u.slice(dist + 1);
  return u.startsWith('node:') ? u : path.basename(u);
}

if (require.main === module) {
  const [file, n = '15'] = process.argv.slice(2);
  if (!file) {
    console.error('usage: node bench/profile-top.js FILE.cpuprofile [N]');
    process.exit(2);
  }
  const profile = JSON.parse(fs.readFileSync(file, 'utf8'));
  const { totalMs, rows } = selfTimes(profile);
  console.log(`${path.basename(file)}: ${(totalMs / 1000).toFixed(1)} s profiled`);
  console.log('| where | ms | share |');
  console.log('| --- | --- | --- |');
  for (const o of byOrigin(profile)) console.log(`| ${o.origin} | ${o.ms.toFixed(0)} | ${((100 * o.ms) / totalMs).toFixed(1)} % |`);
  console.log('');
  console.log('| self ms | share | function | where |');
  console.log('| --- | --- | --- | --- |');
  for (const r of rows.slice(0, Number(n))) console.log(`| ${r.selfMs.toFixed(0)} | ${((100 * r.selfMs) / totalMs).toFixed(1)} % | ${r.fn} | ${r.where} |`);
}

module.exports = { selfTimes, byOrigin, shortUrl };
