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
 *
 * Only an upgrade the upstream accepts (101) becomes a tunnel. Until its answer arrives nothing
 * else of the client's is sent up; a refusal (401, 404, 429…) is forwarded with
 * `Connection: close` and both connections close after it, so a request the client pipelined
 * behind a refused upgrade never reaches the upstream's HTTP server.
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

/** Longest upstream answer head the tunnel reads before it gives up on it, bytes (Node's own limit). */
const MAX_ANSWER_HEAD_BYTES = 16 * 1024;

/** The upstream's answer to the upgrade request, as far as the tunnel needs it. */
type Answer =
  | { readonly kind: 'switched'; readonly bytes: Buffer }
  | {
      readonly kind: 'refused';
      /** The head's lines without the blank line, the status line first. */
      readonly lines: readonly string[];
      /** Bytes after the head that arrived with it (the start of the body). */
      readonly rest: Buffer;
    }
  | { readonly kind: 'malformed' };

/**
 * Reads `up` until the end of its answer head and calls `done` once with it (101: switched; any
 * other status: refused); `up` is left paused, for the caller to pipe or read on.
 */
function awaitAnswer(up: Socket, done: (answer: Answer) => void): void {
  let buffered = Buffer.alloc(0);
  // An upstream that ends before a whole head gave no answer: the client gets 502, not silence.
  const onEnd = () => {
    up.off('data', onData);
    done({ kind: 'malformed' });
  };
  const onData = (chunk: Buffer) => {
    buffered = Buffer.concat([buffered, chunk]);
    const end = buffered.indexOf('\r\n\r\n');
    if (end < 0 && buffered.length <= MAX_ANSWER_HEAD_BYTES) return;
    up.off('data', onData);
    up.off('end', onEnd);
    up.pause();
    const headText = buffered.subarray(0, Math.max(end, 0)).toString('latin1');
    const status = /^HTTP\/1\.[01] (\d{3})/.exec(headText)?.[1];
    if (end < 0 || status === undefined) done({ kind: 'malformed' });
    else if (status === '101') done({ kind: 'switched', bytes: buffered });
    else done({ kind: 'refused', lines: headText.split('\r\n'), rest: buffered.subarray(end + 4) });
  };
  up.on('data', onData);
  up.once('end', onEnd);
}

/**
 * Forwards a refused upgrade's answer to the client with `Connection: close`, then closes both
 * connections once its body is through (Content-Length bytes, or the upstream's end when it gives
 * none): the client's connection must not stay a tunnel to the upstream's HTTP server.
 */
function refused(up: Socket, socket: Duplex, answer: Extract<Answer, { kind: 'refused' }>): void {
  const lines = answer.lines.filter((l, i) => i === 0 || !/^connection\s*:/i.test(l));
  const length = lines
    .map((l) => /^content-length\s*:\s*(\d+)\s*$/i.exec(l)?.[1])
    .find((v) => v !== undefined);
  socket.write(`${[...lines, 'Connection: close'].join('\r\n')}\r\n\r\n`);
  const finish = () => {
    up.destroy();
    // end() flushes what is written; then the connection goes, whatever the client does.
    socket.end(() => socket.destroy());
  };
  if (length === undefined) {
    // No length: the body runs to the upstream's end; ask for that end by ending our side.
    socket.write(answer.rest);
    up.on('data', (chunk: Buffer) => socket.write(chunk));
    up.once('end', finish);
    up.end();
    up.resume();
    return;
  }
  let remaining = Number(length);
  const take = (chunk: Buffer) => {
    const part = chunk.subarray(0, Math.max(remaining, 0));
    if (part.length > 0) socket.write(part);
    remaining -= part.length;
    if (remaining <= 0) {
      up.off('data', take);
      finish();
    }
  };
  up.on('data', take);
  up.once('end', finish);
  take(answer.rest);
  up.resume();
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
      // Set once a refusal was forwarded: the sockets close on their own terms (see refused()).
      let ending = false;
      // Nothing of the client's goes up but its upgrade request until the upstream switches
      // protocols: bytes it pipelined after the request (`head` included) would otherwise reach
      // the upstream as requests of their own once the upgrade is refused on a kept-alive connection.
      socket.pause();
      up.once('connect', () => {
        connected = true;
        open.set(up, socket);
        up.setNoDelay(true);
        (socket as Socket).setNoDelay?.(true);
        up.write(upstreamHead(req, (socket as Socket).remoteAddress));
        awaitAnswer(up, (answer) => {
          if (answer.kind === 'switched') {
            socket.write(answer.bytes);
            if (head.length > 0) up.write(head);
            // pipe() pauses the faster side when the other's buffer is full: TCP backpressure end to
            // end, and ends each side when the other ends, after what is buffered has been written.
            socket.pipe(up);
            up.pipe(socket);
            return;
          }
          ending = true;
          open.delete(up);
          if (answer.kind === 'malformed') {
            log.warn({ upstream }, 'WebSocket upstream answered no HTTP head');
            up.destroy();
            refuse(socket, 502, 'Bad Gateway', 'Stream service unavailable');
            socket.destroy();
            return;
          }
          refused(up, socket, answer);
        });
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
        if (ending) return;
        if (hadError || !up.readableEnded) socket.destroy();
      });
      socket.on('error', () => up.destroy());
      socket.on('close', () => {
        if (!connected || !socket.readableEnded || ending) up.destroy();
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
