/**
 * Native WebTransport load client of the edge benchmarks, a Deno process:
 * Deno's own `WebTransport` (the web API, on its built-in QUIC stack; `--unstable-net`) opens
 * sessions the way a page does (`https://127.0.0.1:<port>/wt?game=…&token=…` with
 * `serverCertificateHashes`), reads each session's datagrams and records, per datagram, the
 * receive time against the round's `timestamp` (bench/recorder.ts). No browser: one process holds
 * thousands of sessions.
 *
 * Driven by bench/edge-wt-native.ts over stdin/stdout, one JSON text per line each way:
 * `{id, req}` in, `{id, reply}` or `{id, error}` out (logs go to stderr). Requests:
 *
 * - `{op: 'open', url, certHash, count, concurrency, timeoutMs}` → OpenReply: at most
 *   `concurrency` handshakes in flight; `certHash` is the base64 SHA-256 of the edge's certificate.
 * - `{op: 'reset', since}` → `{}`: forget deliveries, count only rounds appended at or after `since`.
 * - `{op: 'count'}` → `{count}`.
 * - `{op: 'stats'}` → the StatsReply fields, `latencies` and `timestamps` as base64 Float64Array
 *   bytes, plus the session tally (WtTally: open, ended and why, rounds received per session).
 * - `{op: 'close'}` → `{}` once every session is closed; the process exits when stdin ends.
 *
 * Deno's client makes one QUIC endpoint (one UDP socket, one descriptor) per session, so a process
 * holds at most its open-files limit of sessions.
 */
import { Buffer } from 'node:buffer';
import process from 'node:process';
import { createInterface } from 'node:readline';
import { Recorder, timestampIn } from './recorder.ts';

export type WtLoadRequest =
  | {
      op: 'open';
      url: string;
      certHash: string;
      count: number;
      concurrency: number;
      timeoutMs: number;
    }
  | { op: 'reset'; since: number }
  | { op: 'count' }
  | { op: 'stats' }
  | { op: 'close' };

/** Sessions of a process: open now, ended (not by the client) and why, and how many rounds each received. */
export interface WtTally {
  readonly open: number;
  /** The close code and reason, or the error, of each session ended → how many ended so. */
  readonly ended: Record<string, number>;
  /** Rounds received since the reset → sessions that received that many. */
  readonly received: Record<string, number>;
}

/** The stats reply as it crosses the pipe. */
export interface WtStatsWire extends WtTally {
  readonly count: number;
  readonly latencies: string;
  readonly timestamps: string;
  readonly first: number;
  readonly last: number;
}

interface Session {
  readonly wt: WebTransport;
  /** Rounds received since the reset. */
  got: number;
  /** Why it ended, when it ended while the client was not closing. */
  ended: string | undefined;
}

const rec = new Recorder();
const sessions: Session[] = [];
let closing = false;

// Deno's WebTransport leaves a rejected internal promise unobserved when a handshake fails (its
// datagram reader awaits the session); that must not end the process.
globalThis.addEventListener('unhandledrejection', (e) => e.preventDefault());

async function readDatagrams(s: Session): Promise<void> {
  const reader = s.wt.datagrams.readable.getReader();
  for (;;) {
    const { value, done } = await reader.read();
    if (done || !value) return;
    const b = Buffer.from(value.buffer, value.byteOffset, value.byteLength);
    if (rec.add(timestampIn(b, 0, b.length))) s.got++;
  }
}

/** Opens one session; @throws when it is refused or not ready within `timeoutMs`. */
async function openOne(url: string, value: Uint8Array<ArrayBuffer>, timeoutMs: number): Promise<Session> {
  const wt = new WebTransport(url, { serverCertificateHashes: [{ algorithm: 'sha-256', value }] });
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no session within ${timeoutMs} ms`)), timeoutMs);
  });
  try {
    await Promise.race([wt.ready, late]);
  } catch (err) {
    try {
      wt.close();
    } catch {
      // not connected
    }
    throw err;
  } finally {
    clearTimeout(timer);
  }
  const s: Session = { wt, got: 0, ended: undefined };
  wt.closed.then(
    (info) => {
      if (!closing) s.ended = `code ${info.closeCode ?? '-'} ${info.reason ?? ''}`.trim();
    },
    (err: Error) => {
      if (!closing) s.ended = err.message;
    },
  );
  readDatagrams(s).catch(() => {});
  return s;
}

/** Opens `r.count` sessions. @returns what bench/edge-clients.ts's OpenReply holds. */
async function open(
  r: Extract<WtLoadRequest, { op: 'open' }>,
): Promise<{ opened: number; failed: number; firstError?: string | undefined; ms: number }> {
  const value = new Uint8Array(Buffer.from(r.certHash, 'base64'));
  const t0 = performance.now();
  let next = 0;
  let failed = 0;
  let firstError: string | undefined;
  const lane = async () => {
    while (next < r.count) {
      next++;
      try {
        sessions.push(await openOne(r.url, value, r.timeoutMs));
      } catch (err) {
        failed++;
        firstError ??= (err as Error).message;
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(r.concurrency, r.count) }, lane));
  return { opened: r.count - failed, failed, firstError, ms: performance.now() - t0 };
}

const base64 = (a: Float64Array) => Buffer.from(a.buffer, a.byteOffset, a.byteLength).toString('base64');

function stats(): WtStatsWire {
  const received: Record<string, number> = {};
  const ended: Record<string, number> = {};
  for (const s of sessions) {
    received[s.got] = (received[s.got] ?? 0) + 1;
    if (s.ended !== undefined) ended[s.ended] = (ended[s.ended] ?? 0) + 1;
  }
  return {
    count: rec.count,
    latencies: base64(rec.latencies.slice(0, rec.count)),
    timestamps: base64(rec.timestamps.slice(0, rec.count)),
    first: rec.first,
    last: rec.last,
    open: sessions.filter((s) => s.ended === undefined).length,
    ended,
    received,
  };
}

async function handle(r: WtLoadRequest): Promise<unknown> {
  switch (r.op) {
    case 'open':
      return await open(r);
    case 'reset':
      rec.reset(r.since);
      for (const s of sessions) s.got = 0;
      return {};
    case 'count':
      return { count: rec.count };
    case 'stats':
      return stats();
    case 'close':
      closing = true;
      for (const s of sessions.splice(0)) {
        try {
          s.wt.close({ closeCode: 0, reason: 'benchmark done' });
        } catch {
          // already closed
        }
      }
      return {};
  }
}

const lines = createInterface({ input: process.stdin });
lines.on('line', (line) => {
  const { id, req } = JSON.parse(line) as { id: number; req: WtLoadRequest };
  handle(req).then(
    (reply) => process.stdout.write(`${JSON.stringify({ id, reply })}\n`),
    (err: Error) => process.stdout.write(`${JSON.stringify({ id, error: err.message })}\n`),
  );
});
lines.on('close', () => process.exit(0));
