/**
 * WebSocket upgrades through the gateway as a byte-level tunnel: the client's HTTP upgrade
 * request is replayed to the upstream and the two TCP sockets are piped together.
 *
 * Not `@fastify/http-proxy`'s `websocket: true`: that mode completes the client's handshake at the
 * gateway before the upstream answers (so the edge's "404 before the upgrade" would reach the
 * browser as a 101 followed by a close 1011), forwards only the first subprotocol, and relays
 * frames without backpressure, so a client that never reads would grow the gateway's memory
 * instead of being closed by the edge at its buffer limit. Piping the sockets keeps the upstream's
 * status, headers, subprotocol echo, close codes and TCP backpressure exactly as they are.
 */
import type { IncomingMessage } from 'node:http';
import { connect, type Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import type { Logger } from '../../lib/logger.ts';

/** Upgrade requests answered by the gateway itself carry the REST error shape. */
function refuse(socket: Duplex, status: number, text: string, error: string): void {
  const body = JSON.stringify({ error, success: false });
  socket.end(
    `HTTP/1.1 ${status} ${text}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n` +
      `Access-Control-Allow-Origin: *\r\nConnection: close\r\n\r\n${body}`,
  );
}

/** Hop-by-hop headers the gateway restates rather than copies (RFC 9110 §7.6.1). */
const REPLACED = new Set(['x-forwarded-for', 'x-forwarded-host', 'x-forwarded-proto']);

/** The upgrade request head as sent to the upstream, with X-Forwarded-* added. */
export function upstreamHead(req: IncomingMessage, clientAddress: string | undefined): string {
  const lines = [`${req.method} ${req.url} HTTP/1.1`];
  let forwardedFor = '';
  for (let i = 0; i < req.rawHeaders.length; i += 2) {
    const name = req.rawHeaders[i] as string;
    const value = req.rawHeaders[i + 1] as string;
    if (name.toLowerCase() === 'x-forwarded-for')
      forwardedFor = forwardedFor ? `${forwardedFor}, ${value}` : value;
    if (REPLACED.has(name.toLowerCase())) continue;
    lines.push(`${name}: ${value}`);
  }
  const client = clientAddress ?? 'unknown';
  lines.push(`X-Forwarded-For: ${forwardedFor ? `${forwardedFor}, ${client}` : client}`);
  if (req.headers.host) lines.push(`X-Forwarded-Host: ${req.headers.host}`);
  lines.push('X-Forwarded-Proto: http');
  return `${lines.join('\r\n')}\r\n\r\n`;
}

export interface WsTunnel {
  /** The server's `upgrade` listener. */
  onUpgrade(req: IncomingMessage, socket: Duplex, head: Buffer): void;
  /** Open tunnels. */
  readonly open: number;
  /** Destroys every open tunnel (both sockets). */
  closeAll(): void;
}

/**
 * Tunnels upgrades whose path starts with `prefix` to `upstream` (an http:// origin); any other
 * upgrade is refused with 404. An unreachable upstream is 502.
 */
export function createWsTunnel(upstream: string, prefix: string, logger: Logger): WsTunnel {
  const target = new URL(upstream);
  const port = Number(target.port) || 80;
  const host = target.hostname.replace(/^\[|\]$/g, '');
  const open = new Map<Socket, Duplex>();
  const log = logger.child({ component: 'ws-tunnel' });

  return {
    get open() {
      return open.size;
    },
    onUpgrade(req, socket, head) {
      if (!req.url?.startsWith(prefix)) {
        refuse(socket, 404, 'Not Found', 'Not found');
        return;
      }
      const up = connect({ host, port });
      let connected = false;
      up.once('connect', () => {
        connected = true;
        open.set(up, socket);
        up.setNoDelay(true);
        (socket as Socket).setNoDelay?.(true);
        up.write(upstreamHead(req, (socket as Socket).remoteAddress));
        if (head.length > 0) up.write(head);
        // pipe() pauses the faster side when the other's buffer is full: TCP backpressure end to end,
        // and ends each side when the other ends, after what is buffered has been written.
        socket.pipe(up);
        up.pipe(socket);
      });
      up.on('error', (err) => {
        if (connected) return; // 'close' follows with hadError
        log.warn({ upstream, err: err.message }, 'WebSocket upstream unreachable');
        refuse(socket, 502, 'Bad Gateway', 'Stream service unavailable');
      });
      // A side that closes without a clean end (reset, error) takes the other down at once; after
      // a clean end, pipe() has already ended the other side once its buffer was written.
      up.on('close', (hadError) => {
        open.delete(up);
        if (hadError || !up.readableEnded) socket.destroy();
      });
      socket.on('error', () => up.destroy());
      socket.on('close', () => {
        if (!connected || !socket.readableEnded) up.destroy();
      });
    },
    closeAll() {
      for (const [up, socket] of open) {
        up.destroy();
        socket.destroy();
      }
      open.clear();
    },
  };
}
