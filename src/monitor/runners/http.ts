/**
 * An http monitor (issue 13): a GET every intervalS, run inside sbd (runners/http-get.ts), never
 * two of one monitor at once (the next try is scheduled only once the last has ended; timers run
 * on the monotonic clock). A failure (a status other than expected, a timeout, a refused
 * connection) is counted; the next try waits backoffS (exponential, with jitter:
 * monitor/backoff.ts); after maxConsecutiveFailures in a row the monitor is suspended with one
 * notice naming the last failure, and nothing more is asked. The agent is told when it starts
 * failing and when it recovers (changes of state, never one notice per tick), and notifyOn
 * matches over an expected answer's body, told when the matching lines change (a health page that
 * says "degraded" is told once, not every tick). The URL is shown as scheme://host:port/path only.
 */
import { afterTick, backoffS } from '../backoff';
import { compileMatchers } from '../notices';
import type { Runner, RunnerKit } from '../runner';
import { OUTPUT_CAP_BYTES } from '../spec';
import type { MonitorRecord } from '../store';
import { expected, httpGet, shownUrl, statusOk } from './http-get';
import { perKit } from './state';

interface Probe {
  /** Bumped by every stop and resume: a try of an earlier run is dropped when it ends. */
  generation: number;
  timer?: NodeJS.Timeout | undefined;
  inflight?: AbortController | undefined;
  /** The matching lines of the last body, so the same ones are not told every tick. */
  lastMatched?: string;
}
const probes = perKit<Probe>();

function schedule(kit: RunnerKit, id: string, generation: number, afterS: number): void {
  const p = probes(kit).get(id);
  if (!p || p.generation !== generation) return;
  p.timer = setTimeout(() => {
    tryOnce(kit, id, generation).catch((err: unknown) => kit.host.log('warn', 'an http monitor\'s try failed', { monitor: id, err }));
  }, afterS * 1000);
  p.timer.unref(); // sbd stays up for its bus, not for a monitor's timer
}

const running = (r: MonitorRecord | undefined): r is MonitorRecord => r !== undefined && r.lifecycle === 'running' && r.spec.type === 'http';

async function tryOnce(kit: RunnerKit, id: string, generation: number): Promise<void> {
  const p = probes(kit).get(id);
  const r = kit.get(id);
  if (!p || p.generation !== generation || !running(r) || r.spec.type !== 'http') return;
  const spec = r.spec;
  p.timer = undefined;
  const stop = new AbortController();
  p.inflight = stop;
  const answer = await httpGet(spec.url, spec.timeoutS, OUTPUT_CAP_BYTES, stop.signal);
  p.inflight = undefined;
  const now = kit.get(id);
  if (stop.signal.aborted || p.generation !== generation || !running(now)) return; // stopped meanwhile
  const ok = answer.error === undefined && answer.status !== undefined && statusOk(answer.status, spec.expectStatus);
  const why = answer.error ?? `status ${answer.status} (expected ${expected(spec.expectStatus)})`;
  const step = afterTick({ consecutive: now.consecutiveFailures, suspended: false }, ok, spec.maxConsecutiveFailures);
  const { reason: _was, ...rest } = now;
  const next: MonitorRecord = {
    ...rest, ticks: now.ticks + 1, consecutiveFailures: step.state.consecutive, truncations: now.truncations + (answer.truncated ? 1 : 0),
    ...(ok ? {} : { reason: why }),
  };
  const where = shownUrl(spec.url);
  if (step.suspendNow) {
    const reason = `suspended after ${step.state.consecutive} failure${step.state.consecutive === 1 ? '' : 's'} in a row; the last: ${why}`;
    kit.save({ ...next, lifecycle: 'suspended', reason });
    kit.tell(next, 'suspended', `${reason} (no more requests to ${where})`);
    kit.host.log('warn', 'an http monitor is suspended', { monitor: id, url: where, why });
    return;
  }
  kit.save(next);
  if (!ok && now.consecutiveFailures === 0) {
    kit.tell(next, 'failing', `failing: ${why}; tried again with backoff, suspended after ${spec.maxConsecutiveFailures} failures in a row`);
    kit.host.log('info', 'an http monitor is failing', { monitor: id, url: where, why });
  }
  if (ok && now.consecutiveFailures > 0) {
    kit.tell(next, 'recovered', `recovered: status ${answer.status} after ${now.consecutiveFailures} failure${now.consecutiveFailures === 1 ? '' : 's'}`);
    kit.host.log('info', 'an http monitor recovered', { monitor: id, url: where });
  }
  if (ok && spec.notifyOn.length > 0) {
    const lines = answer.body.toString('utf8').split('\n').map((l) => l.replace(/\r$/, ''));
    const matchers = compileMatchers(spec);
    const matched = lines.filter((l) => matchers.some((m) => m.test(l))).join('\n');
    if (matched !== '' && matched !== p.lastMatched) kit.lines(id, lines);
    p.lastMatched = matched;
  }
  schedule(kit, id, generation, ok ? spec.intervalS : backoffS(spec.intervalS, step.state.consecutive, Math.random()));
}

function startProbe(kit: RunnerKit, id: string): void {
  const map = probes(kit);
  const p = map.get(id) ?? { generation: 0 };
  p.generation += 1;
  map.set(id, p);
  schedule(kit, id, p.generation, 0); // the first try now: the agent learns the state at once
}

function stopProbe(kit: RunnerKit, id: string): void {
  const p = probes(kit).get(id);
  if (!p) return;
  p.generation += 1;
  if (p.timer) clearTimeout(p.timer);
  p.inflight?.abort();
  probes(kit).delete(id);
}

export const httpRunner: Runner = {
  async begin(kit, record) {
    startProbe(kit, record.id);
  },
  resume(kit, record) {
    startProbe(kit, record.id); // failures on record still count toward the suspension
  },
  async stop(kit, record) {
    stopProbe(kit, record.id);
  },
  close(kit) {
    for (const id of [...probes(kit).keys()]) stopProbe(kit, id);
  },
};
