/**
 * sbd's optional HTTP endpoint: GET /metrics on a loopback address (the config accepts no other),
 * for a Prometheus or an agent on the same machine. 404 for every other path, 405 for every other
 * method on /metrics. Idle, a listening socket costs no wakeup.
 */
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface MetricsSource {
  render(): Promise<string>;
  readonly contentType: string;
}

/** The answer to one request (pure in its routing): status, headers and body. */
export async function answer(method: string | undefined, url: string | undefined, source: MetricsSource): Promise<{ status: number; headers: Record<string, string>; body: string }> {
  const pathname = (url ?? '/').split('?')[0];
  const text = { 'Content-Type': 'text/plain; charset=utf-8' };
  if (pathname !== '/metrics') return { status: 404, headers: text, body: 'not found: sbd serves GET /metrics only\n' };
  if (method !== 'GET') return { status: 405, headers: { ...text, Allow: 'GET' }, body: 'method not allowed: GET /metrics only\n' };
  try {
    return { status: 200, headers: { 'Content-Type': source.contentType }, body: await source.render() };
  } catch (err) {
    return { status: 500, headers: text, body: `cannot collect the metrics: ${(err as Error).message}\n` };
  }
}

/** Listen on host:port; resolves with the server once listening, rejects with the listen error (EADDRINUSE, say). */
/**
 * A connection idle this long is closed. Node's own check of slow requests (headersTimeout,
 * requestTimeout) runs on a 30 s interval timer for the life of the server, two wakeups a minute
 * while nothing happens: it is pushed out of reach (connectionsCheckingInterval), and this
 * per-connection time-out, armed only while a client is connected, bounds a slow client instead.
 */
export const CONNECTION_IDLE_MS = 10_000;

/** The longest interval Node's timers take (2^31 - 1 ms, ~24.8 days; a larger one fires at once). */
const NEVER_MS = 2 ** 31 - 1;

export function serveMetrics(listen: { host: string; port: number }, source: MetricsSource): Promise<http.Server> {
  const server = http.createServer({ connectionsCheckingInterval: NEVER_MS }, (req, res) => {
    req.resume(); // a body, if any, is not read
    void answer(req.method, req.url, source).then(({ status, headers, body }) => {
      res.writeHead(status, headers);
      res.end(body);
    });
  });
  server.timeout = CONNECTION_IDLE_MS; // an idle socket is destroyed ('timeout' has no listener)
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen({ host: listen.host, port: listen.port, exclusive: true }, () => {
      server.off('error', reject);
      server.unref(); // sbd lives by its bus, not by this
      resolve(server);
    });
  });
}

/** Where the server listens ("127.0.0.1:9464", "[::1]:9464"). */
export function listeningOn(server: http.Server): string {
  const a = server.address() as AddressInfo;
  return a.family === 'IPv6' ? `[${a.address}]:${a.port}` : `${a.address}:${a.port}`;
}
