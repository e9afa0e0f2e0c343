/**
 * WebSocket transport: one socket on `/ws/?envelope=1` carries every subscription (subscribe and
 * unsubscribe commands out, envelopes in). The credential, a fresh token per connection, is the
 * requested subprotocol (docs/contract.md "Authentication" 3).
 */
import type { ConnectContext, Connection, ConnectionEvents, Transport } from '../transport.ts';
import type { Envelope } from '../types.ts';

/** The WebSocket constructor to use (browsers and Node 22+ have one; pass `ws`'s on Node 20). */
export type WebSocketConstructor = new (url: string, protocols?: string | string[]) => WebSocket;

export interface WebSocketTransportOptions {
  /** The `ws(s)://…/ws/` address for a base URL; default: the base URL with ws(s) and `/ws/`. */
  readonly url?: (baseUrl: string) => string;
  readonly WebSocket?: WebSocketConstructor;
}

/** `https://host` → `wss://host/ws/`. */
export function webSocketUrl(baseUrl: string): string {
  const u = new URL('/ws/', baseUrl);
  u.protocol = u.protocol === 'https:' ? 'wss:' : 'ws:';
  return u.toString();
}

/** A WebSocket transport. */
export function websocketTransport(options: WebSocketTransportOptions = {}): Transport {
  return {
    name: 'websocket',
    connect(ctx: ConnectContext, events: ConnectionEvents): Connection {
      const Ctor = options.WebSocket ?? (globalThis as { WebSocket?: WebSocketConstructor }).WebSocket;
      if (!Ctor) {
        queueMicrotask(() => events.close({ reason: 'WebSocket is not available here', fatal: true }));
        return { subscribe() {}, unsubscribe() {}, close() {} };
      }
      const url = `${(options.url ?? webSocketUrl)(ctx.baseUrl)}?envelope=1`;
      const ws = new Ctor(url, ctx.credential ? [ctx.credential] : []);
      let over = false;
      const queue: string[] = [];
      const send = (o: object) => {
        if (ws.readyState === 1) ws.send(JSON.stringify(o));
        else queue.push(JSON.stringify(o));
      };
      ws.onopen = () => {
        for (const text of queue.splice(0)) ws.send(text);
        events.open();
      };
      ws.onmessage = (m: MessageEvent) => {
        let e: Envelope;
        try {
          e = JSON.parse(String(m.data)) as Envelope;
        } catch {
          return; // not an envelope: ignored
        }
        events.message(e);
      };
      ws.onclose = (c: CloseEvent) => {
        if (over) return;
        over = true;
        events.close({ code: c.code, reason: `closed (code ${c.code}${c.reason ? `: ${c.reason}` : ''})` });
      };
      ws.onerror = () => {}; // a close follows
      return {
        subscribe: (r) => send({ op: 'subscribe', ...r }),
        unsubscribe: (sub) => send({ op: 'unsubscribe', sub }),
        close() {
          over = true;
          ws.close(1000);
        },
      };
    },
  };
}
