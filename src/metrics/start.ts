/**
 * sbd's metrics as configured (config `metrics`): the registry, the textfile for node_exporter
 * and the optional HTTP endpoint. A directory that cannot be written is warned about once
 * (naming it and the fix) and sbd goes on; so does a port that cannot be listened on. On a clean
 * stop the textfile is left where it is: its age shows that sbd is not running.
 */
import * as os from 'node:os';
import type * as http from 'node:http';
import type { MetricsConfig } from '../config/schema';
import type { Logger } from '../daemon/log';
import { listeningOn, serveMetrics } from './http';
import { SbdMetrics, type SbdView } from './registry';
import { WriteSchedule } from './schedule';
import { textfileProblem, writeTextfile } from './textfile';

/** The user sbd runs as, for the `user` label and the textfile's default name ([A-Za-z0-9_.-] only). */
export function runningUser(): string {
  let name: string | undefined;
  try {
    name = os.userInfo().username;
  } catch {
    name = undefined; // a uid without a passwd entry
  }
  const safe = name?.replace(/[^A-Za-z0-9_.-]/g, '_');
  return safe && safe.length > 0 ? safe : `uid${process.getuid?.() ?? 'unknown'}`;
}

/** The textfile's name: as configured, else one per user (several users' sbd share node_exporter's one directory). */
export const textfileNameFor = (configured: string | undefined, user: string): string => configured ?? `sessionbrake-${user}.prom`;

export interface MetricsDeps {
  config: MetricsConfig;
  version: string;
  graceS: number;
  slices: readonly string[];
  view(perSession: boolean): SbdView;
  log: Logger;
  user?: string;
}

export interface RunningMetrics {
  metrics: SbdMetrics;
  /** Something the metrics show changed: the textfile is rewritten shortly. */
  changed(): void;
  /** The HTTP server, once listening (undefined when off or it could not listen). */
  http(): http.Server | undefined;
  /** Resolves once the first textfile write and the HTTP listen have been tried. */
  ready: Promise<void>;
  close(): void;
}

export function startMetrics(deps: MetricsDeps): RunningMetrics {
  const { config, log } = deps;
  const user = deps.user ?? runningUser();
  const metrics = new SbdMetrics({ user, version: deps.version, graceS: deps.graceS, slices: deps.slices, perSession: config.perSession, view: deps.view });
  let schedule: WriteSchedule | undefined;
  let firstWrite: Promise<void> = Promise.resolve();
  const dir = config.textfileDirectory;
  if (dir !== undefined) {
    const name = textfileNameFor(config.textfileName, user);
    let problem: string | undefined;
    let resolveFirst: () => void = () => undefined;
    firstWrite = new Promise((resolve) => {
      resolveFirst = resolve;
    });
    const write = async (): Promise<void> => {
      try {
        const text = await metrics.render();
        writeTextfile(dir, name, text);
        metrics.textfileWritten();
        if (problem !== undefined) log.info({ event: 'metrics-textfile-ok', dir, file: name }, `the metrics textfile is written again: ${dir}/${name}`);
        problem = undefined;
      } catch (err) {
        const why = textfileProblem(err, dir, name, user);
        if (why !== problem) log.warn({ event: 'metrics-textfile-not-written', dir, file: name, code: (err as NodeJS.ErrnoException).code ?? null }, why); // once per distinct problem
        problem = why;
      } finally {
        resolveFirst();
      }
    };
    schedule = new WriteSchedule(write);
    schedule.start();
  }
  let server: http.Server | undefined;
  let closed = false;
  const listen = config.httpListen;
  const listening: Promise<void> = listen
    ? serveMetrics(listen, metrics).then(
        (s) => {
          if (closed) return void s.close();
          server = s;
          log.info({ event: 'metrics-http', listen: listeningOn(s) }, `metrics served on http://${listeningOn(s)}/metrics`);
        },
        (err: unknown) => {
          const code = (err as NodeJS.ErrnoException).code;
          log.warn({ event: 'metrics-http-failed', code: code ?? null }, `cannot serve metrics on ${listen.host}:${listen.port}: ${code === 'EADDRINUSE' ? 'the port is in use: choose another metrics.httpListen' : (err as Error).message}; sbd goes on without it`);
        },
      )
    : Promise.resolve();
  return {
    metrics,
    changed: () => schedule?.changed(),
    http: () => server,
    ready: Promise.all([firstWrite, listening]).then(() => undefined),
    close: () => {
      closed = true;
      schedule?.close();
      server?.close();
      server?.closeAllConnections();
    },
  };
}
