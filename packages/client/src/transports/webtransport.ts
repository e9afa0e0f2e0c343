/**
 * WebTransport transport (browsers): one session on `https://{host}:4433/wt?envelope=1` carries
 * every subscription. Live rounds arrive as datagrams, everything else (catch-ups, `recovered`,
 * lifecycle, heartbeats, errors) on the server's reliable stream, one JSON text per line; commands
 * go out on a stream of the client's. A datagram may be lost: each live round names the previous
 * round of its game (`prev`), and the client resumes a subscription that missed one (client.ts).
 */
import type { ConnectContext, Connection, ConnectionEvents, Transport } from '../transport.ts';
import type { Envelope } from '../types.ts';

/** The certificate hash form of `serverCertificateHashes`. */
export interface CertificateHash {
  readonly algorithm: string;
  readonly value: BufferSource;
}

export interface WebTransportOptions {
  /** The `https://host:port/wt` address for a base URL; default: the base URL's host on port 4433. */
  readonly url?: (baseUrl: string) => string;
  /** Hashes of a self-signed certificate (development), or a function fetching them per connection. */
  readonly certificateHashes?: readonly CertificateHash[] | (() => Promise<readonly CertificateHash[]>);
}

/** `https://host:8080` → `https://host:4433/wt` (docs/contract.md: WebTransport is on 4433). */
export function webTransportUrl(baseUrl: string, port = 4433): string {
  const u = new URL(baseUrl);
  return `https://${u.hostname}:${port}/wt`;
}

/**
 * Hashes served by the platform at `url` as `{algorithm, hash}` (hash base64), as the edge's
 * `/cert-hash` (through the gateway `/webtransport/cert-hash`) answers.
 */
export function certificateHashesFrom(url: string): () => Promise<readonly CertificateHash[]> {
  return async () => {
    const res = await fetch(url, { cache: 'no-store' });
    if (!res.ok) throw new Error(`certificate hash unavailable (HTTP ${res.status})`);
    const info = (await res.json()) as { algorithm?: string; hash: string };
    const bin = atob(info.hash);
    const value = new Uint8Array(bin.length);
    for (let i = 0; i < bin.length; i++) value[i] = bin.charCodeAt(i);
    return [{ algorithm: info.algorithm ?? 'sha-256', value }];
  };
}

/** Calls `onLine` per line of a byte stream until it ends. */
async function readLines(stream: ReadableStream<Uint8Array>, onLine: (line: string) => void): Promise<void> {
  const reader = stream.getReader();
  const decoder = new TextDecoder();
  let buf = '';
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    buf += decoder.decode(value, { stream: true });
    let nl = buf.indexOf('\n');
    while (nl >= 0) {
      if (nl > 0) onLine(buf.slice(0, nl));
      buf = buf.slice(nl + 1);
      nl = buf.indexOf('\n');
    }
  }
}

/** A WebTransport transport. */
export function webTransport(options: WebTransportOptions = {}): Transport {
  return {
    name: 'webtransport',
    connect(ctx: ConnectContext, events: ConnectionEvents): Connection {
      let over = false;
      let wt: WebTransport | undefined;
      let writer: WritableStreamDefaultWriter<Uint8Array> | undefined;
      const queue: string[] = [];
      const encoder = new TextEncoder();
      const deliver = (text: string) => {
        try {
          events.message(JSON.parse(text) as Envelope);
        } catch {
          // not an envelope: ignored
        }
      };
      const send = (o: object) => {
        const line = `${JSON.stringify(o)}\n`;
        if (writer) void writer.write(encoder.encode(line)).catch(() => {});
        else queue.push(line);
      };
      const fail = (reason: string, fatal = false) => {
        if (over) return;
        over = true;
        events.close({ reason, fatal });
      };
      (async () => {
        if (typeof WebTransport === 'undefined')
          return fail(
            'WebTransport is not available: it needs a recent Chromium or Firefox and a secure context',
            true,
          );
        const hashes =
          typeof options.certificateHashes === 'function'
            ? await options.certificateHashes()
            : options.certificateHashes;
        const q = new URLSearchParams({ envelope: '1' });
        if (ctx.credential) q.set('token', ctx.credential);
        const t = new WebTransport(
          `${(options.url ?? webTransportUrl)(ctx.baseUrl)}?${q}`,
          hashes ? { serverCertificateHashes: [...hashes] } : {},
        );
        wt = t;
        t.closed.then(
          (i) => fail(i?.reason ? `closed: ${i.reason}` : 'closed'),
          (e: Error) => fail(`connection failed: ${e?.message ?? e}`),
        );
        await t.ready;
        if (over) return t.close();
        const out = await t.createUnidirectionalStream();
        writer = out.getWriter();
        for (const line of queue.splice(0)) void writer.write(encoder.encode(line)).catch(() => {});
        void (async () => {
          const incoming = t.incomingUnidirectionalStreams.getReader();
          for (;;) {
            const { value, done } = await incoming.read();
            if (done) break;
            void readLines(value, deliver).catch(() => {});
          }
        })().catch(() => {});
        void (async () => {
          const datagrams = t.datagrams.readable.getReader();
          const decoder = new TextDecoder();
          for (;;) {
            const { value, done } = await datagrams.read();
            if (done) break;
            deliver(decoder.decode(value));
          }
        })().catch(() => {});
        events.open();
      })().catch((err: Error) => fail(err?.message ?? String(err)));
      return {
        subscribe: (r) => send({ op: 'subscribe', ...r }),
        unsubscribe: (sub) => send({ op: 'unsubscribe', sub }),
        close() {
          over = true;
          wt?.close();
        },
      };
    },
  };
}
