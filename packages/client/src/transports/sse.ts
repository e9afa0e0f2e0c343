/**
 * SSE transport: one `text/event-stream` per subscription on `/sse/:game` or `/sse/type/:type`
 * (or the gRPC proxy's `/grpc-proxy/stream/…`, which relays gRPC's resumable stream the same way),
 * read with fetch so the credential goes in a header and the resume position in `since`. SSE's own
 * framing is the envelope: the event name is the type (`initial`/`message` rounds, `recovered`,
 * `round-opened`/`betting-closed`), the id is the position.
 */
import { SseParser } from '../sse-parser.ts';
import type {
  ConnectContext,
  Connection,
  ConnectionEvents,
  SubscribeRequest,
  Transport,
} from '../transport.ts';
import type { Envelope, LifecycleMessage, RecoveredInfo, StreamRound } from '../types.ts';

export interface SseTransportOptions {
  /** Path prefix of the streams (default `/sse`; `/grpc-proxy/stream` for gRPC through the proxy). */
  readonly path?: string;
  readonly fetch?: typeof fetch;
}

/** `game:crash` → `/crash`, `type:color` → `/type/color`, `all` → `/all` on /sse, `` on the proxy (StreamAll). */
function segment(sub: string, prefix: string): string {
  if (sub.startsWith('game:')) return `/${encodeURIComponent(sub.slice(5))}`;
  if (sub.startsWith('type:')) return `/type/${encodeURIComponent(sub.slice(5))}`;
  return prefix === '/sse' ? '/all' : '';
}

/** The envelope an SSE event stands for. */
export function envelopeOf(sub: string, event: string, data: string, id: string): Envelope | undefined {
  const parsed = JSON.parse(data) as unknown;
  if (event === 'initial' || event === 'message')
    return {
      type: 'round',
      sub,
      position: id,
      data: parsed as StreamRound,
      ...(event === 'initial' ? { initial: true } : {}),
    };
  if (event === 'recovered') return { type: 'recovered', sub, position: id, data: parsed as RecoveredInfo };
  if (event === 'round-opened' || event === 'betting-closed')
    return { type: 'lifecycle', sub, position: id, data: parsed as LifecycleMessage };
  return undefined;
}

/** An SSE transport. */
export function sseTransport(options: SseTransportOptions = {}): Transport {
  const prefix = options.path ?? '/sse';
  return {
    name: prefix === '/sse' ? 'sse' : 'grpc-proxy',
    connect(ctx: ConnectContext, events: ConnectionEvents): Connection {
      const doFetch = options.fetch ?? globalThis.fetch.bind(globalThis);
      const streams = new Map<string, AbortController>();
      let over = false;
      let opened = false;
      const fail = (code: number | string | undefined, reason: string) => {
        if (over) return;
        over = true;
        for (const a of streams.values()) a.abort();
        events.close({ code, reason });
      };

      const open = async (r: SubscribeRequest, abort: AbortController) => {
        const q = new URLSearchParams({ envelope: '1' });
        if (r.lifecycle) q.set('lifecycle', '1');
        if (r.latest) q.set('latest', '1'); // /sse sends `initial` anyway; the gRPC proxy on request
        if (r.since) q.set('since', r.since);
        const headers: Record<string, string> = { Accept: 'text/event-stream' };
        if (ctx.credential) headers['X-API-Key'] = ctx.credential;
        const res = await doFetch(new URL(`${prefix}${segment(r.sub, prefix)}?${q}`, ctx.baseUrl), {
          headers,
          signal: abort.signal,
          cache: 'no-store',
        });
        if (res.status !== 200) {
          const body = (await res.json().catch(() => ({}))) as { error?: string };
          const error = body.error ?? `HTTP ${res.status}`;
          // Refusals retrying cannot fix belong to the subscription; the rest to the connection.
          if ([400, 403, 404].includes(res.status))
            events.message({
              type: 'error',
              sub: r.sub,
              position: null,
              data: { status: res.status, error, op: 'subscribe' },
            });
          else fail(res.status, error);
          return;
        }
        if (!opened) {
          opened = true;
          events.open();
        }
        let last = '';
        const parser = new SseParser(
          (m) => {
            last = m.id;
            const e = envelopeOf(r.sub, m.event, m.data, m.id);
            if (e) events.message(e);
          },
          (comment) => {
            if (comment === 'heartbeat' && last)
              events.message({ type: 'heartbeat', sub: r.sub, position: last, data: {} });
          },
        );
        const reader = (res.body as ReadableStream<Uint8Array>).getReader();
        const decoder = new TextDecoder();
        for (;;) {
          const { value, done } = await reader.read();
          if (done) break;
          parser.feed(decoder.decode(value, { stream: true }));
        }
        if (streams.get(r.sub) === abort) fail(undefined, 'stream ended');
      };

      return {
        subscribe(r) {
          streams.get(r.sub)?.abort();
          const abort = new AbortController();
          streams.set(r.sub, abort);
          open(r, abort).catch((err: Error) => {
            if (!abort.signal.aborted) fail(undefined, err.message || 'stream failed');
          });
        },
        unsubscribe(sub) {
          streams.get(sub)?.abort();
          streams.delete(sub);
        },
        close() {
          over = true;
          for (const a of streams.values()) a.abort();
          streams.clear();
        },
      };
    },
  };
}
