#!/usr/bin/env node
// @ts-check
'use strict';
// Top self-time functions of a V8 .cpuprofile (node --cpu-prof), optionally only the samples
// taken under a function of a given name (say GetStatus: what one D-Bus method costs sbd), and
// only those taken from S seconds after the profile began and before T (say sbd idle, after its
// adoption and before its stop).
// --callees NAME: instead, the total time under each frame called directly from a frame named
// NAME (where a function's time went, one level down; its own time as "(self)").
// --tree DEPTH [--min MS]: instead, the call tree top-down to DEPTH levels, each frame's total time.
//   node bench/cpuprofile.js FILE.cpuprofile [--under NAME | --callees NAME | --tree DEPTH] [--from S] [--to T] [--top N]
const fs = require('node:fs');

/**
 * @typedef {{ id: number, callFrame: { functionName: string, url: string, lineNumber: number }, children?: number[] }} ProfileNode
 * @typedef {{ nodes: ProfileNode[], samples: number[], timeDeltas: number[] }} Profile
 */

/** "name file:line" of a node, the file relative to the project when it is inside it. */
function frameName(n) {
  const f = n.callFrame;
  const file = f.url.replace(/^file:\/\//, '').replace(/^.*\/(dist|node_modules)\//, '$1/');
  return `${f.functionName || '(anonymous)'}${file ? ` ${file}:${f.lineNumber + 1}` : ''}`;
}

/**
 * Self time per function (µs), summed over the samples (under a frame named `under` when given;
 * taken from `fromUs` to before `toUs` after the profile's start when given), biggest first, and
 * the total sampled time they add up to.
 * @param {Profile} profile  @param {{ under?: string, fromUs?: number, toUs?: number }} [o]
 * @returns {{ totalUs: number, rows: Array<{ name: string, selfUs: number }> }}
 */
function selfTimes(profile, { under, fromUs = 0, toUs = Infinity } = {}) {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const parent = new Map();
  for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const isUnder = new Map();
  const inside = (id) => {
    if (under === undefined) return true;
    if (isUnder.has(id)) return isUnder.get(id);
    const p = parent.get(id);
    const v = byId.get(id)?.callFrame.functionName === under || (p !== undefined && inside(p));
    isUnder.set(id, v);
    return v;
  };
  const self = new Map();
  let totalUs = 0;
  // timeDeltas[i] is the time before sample i: the time a sample stands for is the next delta.
  let atUs = 0;
  for (let i = 0; i < profile.samples.length; i++) {
    const id = profile.samples[i];
    atUs += profile.timeDeltas[i];
    const us = profile.timeDeltas[i + 1] ?? 0;
    if (atUs < fromUs || atUs >= toUs || !inside(id)) continue;
    const name = frameName(/** @type {ProfileNode} */ (byId.get(id)));
    self.set(name, (self.get(name) ?? 0) + us);
    totalUs += us;
  }
  const rows = [...self].map(([name, selfUs]) => ({ name, selfUs })).sort((a, b) => b.selfUs - a.selfUs);
  return { totalUs, rows };
}

/** How many times a frame named `name` was entered (sample runs of it, for a per-call figure). */
function entries(profile, name) {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const parent = new Map();
  for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const under = (id) => {
    for (let x = id; x !== undefined; x = parent.get(x)) if (byId.get(x)?.callFrame.functionName === name) return true;
    return false;
  };
  let n = 0;
  let was = false;
  for (const id of profile.samples) {
    const now = under(id);
    if (now && !was) n++;
    was = now;
  }
  return n;
}

/**
 * Total time (µs) under each frame called directly from the innermost frame named `name`, per
 * callee ("(self)": the samples in that frame itself), from `fromUs` to before `toUs`, biggest first.
 * @param {Profile} profile  @param {string} name  @param {{ fromUs?: number, toUs?: number }} [o]
 * @returns {Array<{ name: string, totalUs: number }>}
 */
function calleeTimes(profile, name, { fromUs = 0, toUs = Infinity } = {}) {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const parent = new Map();
  for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const tot = new Map();
  let atUs = 0;
  for (let i = 0; i < profile.samples.length; i++) {
    atUs += profile.timeDeltas[i];
    const us = profile.timeDeltas[i + 1] ?? 0;
    if (atUs < fromUs || atUs >= toUs) continue;
    let below;
    for (let id = profile.samples[i]; id !== undefined; id = parent.get(id)) {
      const n = /** @type {ProfileNode} */ (byId.get(id));
      if (n.callFrame.functionName === name) {
        const k = below ? frameName(below) : '(self)';
        tot.set(k, (tot.get(k) ?? 0) + us);
        break;
      }
      below = n;
    }
  }
  return [...tot].map(([n, totalUs]) => ({ name: n, totalUs })).sort((a, b) => b.totalUs - a.totalUs);
}

/**
 * The call tree top-down, to `depth` levels below the root: each frame's total time (µs, its
 * samples and its callees') from `fromUs` to before `toUs`, callees biggest first, frames under
 * `minUs` left out. Lines are "indent ms name".
 * @param {Profile} profile  @param {{ fromUs?: number, toUs?: number, depth?: number, minUs?: number }} [o]
 * @returns {string[]}
 */
function treeLines(profile, { fromUs = 0, toUs = Infinity, depth = 5, minUs = 0 } = {}) {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const self = new Map();
  let atUs = 0;
  for (let i = 0; i < profile.samples.length; i++) {
    atUs += profile.timeDeltas[i];
    if (atUs < fromUs || atUs >= toUs) continue;
    self.set(profile.samples[i], (self.get(profile.samples[i]) ?? 0) + (profile.timeDeltas[i + 1] ?? 0));
  }
  const total = new Map();
  const totalOf = (id) => {
    let t = total.get(id);
    if (t !== undefined) return t;
    t = self.get(id) ?? 0;
    for (const c of byId.get(id)?.children ?? []) t += totalOf(c);
    total.set(id, t);
    return t;
  };
  const lines = [];
  const walk = (id, level) => {
    const us = totalOf(id);
    if (us < minUs) return;
    lines.push(`${'  '.repeat(level)}${(us / 1000).toFixed(0)} ${frameName(/** @type {ProfileNode} */ (byId.get(id)))}`);
    if (level >= depth) return;
    for (const c of [...(byId.get(id)?.children ?? [])].sort((a, b) => totalOf(b) - totalOf(a))) walk(c, level + 1);
  };
  const root = profile.nodes[0];
  if (root) walk(root.id, 0);
  return lines;
}

if (require.main === module) {
  const args = process.argv.slice(2);
  const opt = (k) => {
    const i = args.indexOf(k);
    return i >= 0 ? args.splice(i, 2)[1] : undefined;
  };
  const under = opt('--under');
  const callees = opt('--callees');
  const top = Number(opt('--top') ?? 15);
  const from = Number(opt('--from') ?? 0);
  const to = Number(opt('--to') ?? Infinity);
  const tree = opt('--tree');
  const minMs = Number(opt('--min') ?? 0);
  const profile = JSON.parse(fs.readFileSync(args[0], 'utf8'));
  if (tree !== undefined) {
    console.log(`${args[0]}: the call tree${from ? ` from ${from} s` : ''}${to < Infinity ? ` to ${to} s` : ''}, ms under each frame (its own and its callees'), ${tree} levels, frames of ${minMs} ms or more`);
    for (const l of treeLines(profile, { fromUs: from * 1e6, toUs: to * 1e6, depth: Number(tree), minUs: minMs * 1000 })) console.log(l);
    process.exit(0);
  }
  if (callees !== undefined) {
    console.log(`${args[0]}: what ${callees} called${from ? ` from ${from} s` : ''}${to < Infinity ? ` to ${to} s` : ''}, total time under each`);
    console.log('| ms | callee |\n| ---: | --- |');
    for (const r of calleeTimes(profile, callees, { fromUs: from * 1e6, toUs: to * 1e6 }).slice(0, top)) console.log(`| ${(r.totalUs / 1000).toFixed(0)} | ${r.name} |`);
    process.exit(0);
  }
  const { totalUs, rows } = selfTimes(profile, { under, fromUs: from * 1e6, toUs: to * 1e6 });
  console.log(`${args[0]}: ${(totalUs / 1000).toFixed(0)} ms sampled${from ? ` from ${from} s` : ''}${to < Infinity ? ` to ${to} s` : ''}${under ? ` under ${under} (${entries(profile, under)} runs of samples)` : ''}`);
  console.log('| self ms | share | function |\n| ---: | ---: | --- |');
  for (const r of rows.slice(0, top)) console.log(`| ${(r.selfUs / 1000).toFixed(1)} | ${((100 * r.selfUs) / totalUs).toFixed(1)} % | ${r.name} |`);
}

module.exports = { selfTimes, entries, frameName, calleeTimes, treeLines };
