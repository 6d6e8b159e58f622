/**
 * sbd's own process, read from /proc/self when the metrics are read, with the project's parsers.
 * Not prom-client's collectDefaultMetrics: its event-loop-lag collector arms
 * perf_hooks.monitorEventLoopDelay, a 10 ms timer for the life of the process, and sbd's idle
 * wakeups must stay flat (issue 15). Nothing here runs between two reads.
 */
import * as fs from 'node:fs';
import { Counter, Gauge, type Registry } from 'prom-client';
import { parseStat } from '../proc/stat';
import { systemClockTicks, systemPageSize } from '../proc/system';

const SELF_STAT = '/proc/self/stat';

/** `Max open files` soft limit from /proc/self/limits (pure); undefined when absent or unlimited. */
export function parseMaxOpenFiles(text: string): number | undefined {
  const line = text.split('\n').find((l) => l.startsWith('Max open files'));
  const soft = line?.slice('Max open files'.length).trim().split(/\s+/)[0];
  const n = Number(soft);
  return soft !== undefined && Number.isFinite(n) ? n : undefined;
}

/** Seconds since the epoch when this process started: the wall clock now less its uptime (read once). */
const startTimeS = Math.round(Date.now() / 1000 - process.uptime());

export function registerProcessMetrics(registry: Registry, prefix: string): void {
  const registers = [registry];
  const self = (): ReturnType<typeof parseStat> | undefined => {
    try {
      return parseStat(fs.readFileSync(SELF_STAT, 'utf8'), SELF_STAT);
    } catch {
      return undefined; // no /proc: the series is left out rather than wrong
    }
  };
  let cpuSeenS = 0;
  new Counter({
    name: `${prefix}process_cpu_seconds_total`,
    help: "sbd's CPU time, user and system, in seconds.",
    registers,
    collect() {
      const st = self();
      if (!st) return;
      const now = st.cpuTicks / systemClockTicks();
      if (now > cpuSeenS) this.inc(now - cpuSeenS);
      cpuSeenS = Math.max(cpuSeenS, now);
    },
  });
  new Gauge({
    name: `${prefix}process_resident_memory_bytes`,
    help: "sbd's resident memory in bytes.",
    registers,
    collect() {
      const st = self();
      if (st) this.set(st.rssPages * systemPageSize());
    },
  });
  new Gauge({
    name: `${prefix}process_open_fds`,
    help: 'File descriptors sbd has open.',
    registers,
    collect() {
      try {
        this.set(fs.readdirSync('/proc/self/fd').length - 1); // less the one the listing itself held
      } catch {
        /* no /proc */
      }
    },
  });
  new Gauge({
    name: `${prefix}process_max_fds`,
    help: "sbd's limit of open file descriptors (soft).",
    registers,
    collect() {
      try {
        const max = parseMaxOpenFiles(fs.readFileSync('/proc/self/limits', 'utf8'));
        if (max !== undefined) this.set(max);
      } catch {
        /* no /proc */
      }
    },
  });
  new Gauge({ name: `${prefix}process_start_time_seconds`, help: 'When sbd started, in seconds since the Unix epoch.', registers }).set(startTimeS);
}
