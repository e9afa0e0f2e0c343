/**
 * Relays one gRPC server stream to a browser as Server-Sent Events (the grpc.html
 * demo truly goes through gRPC). Each gRPC message becomes `event: message` with the stream-form
 * JSON as data — the seed's stream form, field for field, as on every other protocol.
 *
 * The HTTP answer is decided by the gRPC call: its response headers mean the server accepted the
 * stream, and only then is the 200 event stream committed; a status before that becomes an HTTP
 * error (`onRefused`). After the start, a non-OK status is sent as `event: error` (data
 * `{error, code}`) and the response ends; the browser's EventSource then reconnects by itself.
 * Closing the HTTP response cancels the gRPC call.
 *
 * Backpressure: when the response buffer is full the gRPC call is paused, so the edge's gRPC
 * guard (RESOURCE_EXHAUSTED at GRPC_MAX_BUFFER_BYTES) bounds a slow page, not this process.
 */
import type { ServerResponse } from 'node:http';
import { type ClientReadableStream, type ServiceError, status } from '@grpc/grpc-js';
import type { RoundMsg } from '../grpc/proto.ts';

/** Headers of the seed's SSE answer ("Streaming endpoints"), plus CORS `*` and no proxy buffering. */
export const SSE_HEADERS = {
  'Content-Type': 'text/event-stream',
  'Cache-Control': 'no-cache',
  Connection: 'keep-alive',
  'Access-Control-Allow-Origin': '*',
  'X-Accel-Buffering': 'no',
} as const;

/**
 * A decoded `Round` as the seed's stream form: its seven fields in the seed's order, proto3
 * defaults filled in (the decoder leaves fields at their default value absent).
 */
export function streamFormOf(m: RoundMsg): RoundMsg {
  return {
    round_id: Number(m.round_id ?? 0),
    game_id: m.game_id ?? 0,
    game_slug: m.game_slug ?? '',
    game_type: m.game_type ?? '',
    finished_at: m.finished_at ?? '',
    extras: m.extras ?? '',
    timestamp: Number(m.timestamp ?? 0),
  };
}

export interface RelayOptions {
  /** The response, not yet written to. */
  readonly res: ServerResponse;
  /** `: heartbeat` comment period, ms (docs/contract.md: 15 s). */
  readonly heartbeatMs: number;
  /** The call ended with `err` before its headers came: answer with an HTTP error instead. */
  readonly onRefused: (err: ServiceError) => void;
  /** Once the event stream is committed (before its first byte). */
  readonly onOpen?: () => void;
  /** Once, when the relay is over however it ended; `opened` tells whether `onOpen` ran. */
  readonly onEnd?: (opened: boolean) => void;
  /** The SSE text of one message (default: `event: message` with the stream form); '' writes nothing. */
  readonly frame?: (m: never) => string;
}

/** The default frame: a `Round` as `event: message` with the seed's stream form. */
export function roundFrame(m: RoundMsg): string {
  return `event: message\ndata: ${JSON.stringify(streamFormOf(m))}\n\n`;
}

/** A running relay; `end()` stops it (shutdown), cancelling the call and ending the response. */
export interface Relay {
  end(): void;
}

/** Starts relaying `call` into `opts.res`. */
export function relayToSse(call: ClientReadableStream<unknown>, opts: RelayOptions): Relay {
  const frame = (opts.frame ?? roundFrame) as (m: unknown) => string;
  const { res } = opts;
  let started = false;
  let finished = false;
  let heartbeat: NodeJS.Timeout | undefined;

  const finish = (refused?: ServiceError) => {
    if (finished) return;
    finished = true;
    clearInterval(heartbeat);
    call.cancel(); // no-op once the call has its status
    if (refused && !res.destroyed) opts.onRefused(refused);
    else if (!refused && !res.writableEnded) res.end();
    opts.onEnd?.(started);
  };

  call.once('metadata', () => {
    if (finished || res.destroyed) return finish();
    started = true;
    res.writeHead(200, SSE_HEADERS);
    res.write(': connected\n\n'); // lets the page's EventSource report "open" at once
    heartbeat = setInterval(() => res.write(': heartbeat\n\n'), opts.heartbeatMs);
    opts.onOpen?.();
  });

  call.on('data', (m: unknown) => {
    if (finished) return;
    const text = frame(m);
    if (text !== '' && !res.write(text)) {
      call.pause();
      res.once('drain', () => call.resume());
    }
  });

  call.on('error', (err: ServiceError) => {
    if (finished) return;
    if (!started) return finish(err);
    if (err.code !== status.CANCELLED && !res.destroyed) {
      res.write(`event: error\ndata: ${JSON.stringify({ error: err.details, code: status[err.code] })}\n\n`);
    }
    finish();
  });

  call.on('end', () => finish()); // the server ended the stream with OK
  res.on('close', () => finish()); // the page went away (or the response ended): cancel the call

  return { end: () => finish() };
}
