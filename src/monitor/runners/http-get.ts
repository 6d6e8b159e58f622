/**
 * One GET of an http monitor (issue 13), inside sbd (node:http/https, no curl): bounded in time
 * (the whole exchange, body included, is aborted after timeoutS) and in size (the body is read
 * up to a cap, the connection is dropped after it and the answer says it was truncated).
 * Redirects are not followed: a 3xx is an answer like any other (ok by default; expectStatus
 * decides), so a monitor never wanders to a host it was not given.
 */
import * as http from 'node:http';
import * as https from 'node:https';

export interface HttpAnswer {
  /** The status, when an answer came. */
  status?: number;
  body: Buffer;
  /** The body went on past the cap (the rest was not read). */
  truncated: boolean;
  /** Why no (whole) answer came: a timeout, a refused connection, a TLS failure. */
  error?: string;
}

/** The URL as it may be logged or shown: scheme://host:port/path, never its userinfo or query (they may carry tokens). */
export function shownUrl(url: string): string {
  try {
    const u = new URL(url);
    const port = u.port || (u.protocol === 'https:' ? '443' : '80');
    return `${u.protocol}//${u.hostname}:${port}${u.pathname}`;
  } catch {
    return '(a URL that does not parse)';
  }
}

/** Is `status` what the monitor expects: expectStatus exactly, else any 2xx or 3xx (pure). */
export function statusOk(status: number, expectStatus: number | undefined): boolean {
  return expectStatus !== undefined ? status === expectStatus : status >= 200 && status < 400;
}

export const expected = (expectStatus: number | undefined): string => (expectStatus !== undefined ? String(expectStatus) : '2xx or 3xx');

/** Why a request failed, in words, from its error's code (the message may carry the URL: not used). */
export function failureOf(err: unknown, timeoutS: number): string {
  const e = err as NodeJS.ErrnoException | undefined;
  if (e?.name === 'AbortError' || e?.name === 'TimeoutError') return `no answer within ${timeoutS} s`;
  const code = e?.code;
  switch (code) {
    case 'ECONNREFUSED':
      return 'connection refused';
    case 'ECONNRESET':
      return 'connection reset';
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
      return 'host not found';
    case 'EHOSTUNREACH':
    case 'ENETUNREACH':
      return 'host unreachable';
    case undefined:
      return 'the request failed';
    default:
      return code.startsWith('ERR_TLS') || /CERT|SSL/.test(code) ? `TLS: ${code}` : `the request failed (${code})`;
  }
}

/** GET `url`; resolves (never rejects) with what came. `stop` aborts it (the answer is then dropped by the caller). */
export function httpGet(url: string, timeoutS: number, capBytes: number, stop: AbortSignal): Promise<HttpAnswer> {
  return new Promise((resolve) => {
    const signal = AbortSignal.any([stop, AbortSignal.timeout(timeoutS * 1000)]);
    const chunks: Buffer[] = [];
    let size = 0;
    let truncated = false;
    let status: number | undefined;
    let settled = false;
    const done = (error?: string): void => {
      if (settled) return;
      settled = true;
      resolve({ ...(status !== undefined ? { status } : {}), body: Buffer.concat(chunks), truncated, ...(error !== undefined ? { error } : {}) });
    };
    const get = url.startsWith('https:') ? https.get : http.get;
    let req: http.ClientRequest;
    try {
      // agent: false: one connection per try, nothing kept open between ticks
      req = get(url, { signal, agent: false, headers: { 'user-agent': 'sessionbrake-monitor', accept: '*/*' } }, (res) => {
        status = res.statusCode;
        res.on('data', (chunk: Buffer) => {
          if (truncated) return;
          const room = capBytes - size;
          if (chunk.length > room) {
            chunks.push(chunk.subarray(0, room));
            size = capBytes;
            truncated = true;
            res.destroy(); // the rest is not read
            done();
            return;
          }
          chunks.push(chunk);
          size += chunk.length;
        });
        res.on('end', () => done());
        res.on('error', (err) => done(failureOf(err, timeoutS)));
        res.on('close', () => done(res.complete || truncated ? undefined : signal.aborted ? failureOf(signal.reason, timeoutS) : 'the answer was cut off'));
      });
    } catch (err) {
      done(failureOf(err, timeoutS));
      return;
    }
    req.on('error', (err) => done(failureOf(err, timeoutS)));
  });
}
