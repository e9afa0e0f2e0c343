/**
 * A minimal SSE client for the edge's tests (not a test file): node:http, so the raw wire text,
 * the response headers and the socket (to stop reading) are all visible; the text/event-stream
 * format is parsed by eventsource-parser.
 */
import { get, type IncomingMessage } from 'node:http';
import { createParser } from 'eventsource-parser';

/**
 * An event as dispatched by the parser (one with data), or a comment line on its own, as the
 * parser reports comments apart (e.g. `: heartbeat` → `{ comments: ['heartbeat'] }`).
 */
export interface SseEvent {
  readonly event?: string;
  readonly id?: string;
  readonly data?: string;
  /** Comment lines (without the leading colon). */
  readonly comments: readonly string[];
}

export interface SseClient {
  readonly res: IncomingMessage;
  /** Everything received so far. */
  raw: string;
  /** Events and comments received so far, in arrival order. */
  readonly events: SseEvent[];
  ended: boolean;
  /** Events with an `event` field (initial, message), in order. */
  named(): SseEvent[];
  close(): void;
}

/** GETs `path` on 127.0.0.1:`port`; resolves with the response head (any status). */
export function openSse(
  port: number,
  path: string,
  headers: Record<string, string> = {},
): Promise<SseClient> {
  return new Promise((resolve, reject) => {
    const req = get(
      { host: '127.0.0.1', port, path, headers: { Accept: 'text/event-stream', ...headers } },
      (res) => {
        const client: SseClient = {
          res,
          raw: '',
          events: [],
          ended: false,
          named: () => client.events.filter((e) => e.event !== undefined),
          close: () => req.destroy(),
        };
        const parser = createParser({
          // Only the fields the edge sends: `event` stays undefined when the stream names none.
          onEvent: ({ event, id, data }) => {
            client.events.push({ event, id, data, comments: [] });
          },
          onComment: (comment) => {
            client.events.push({ comments: [comment] });
          },
        });
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => {
          client.raw += chunk;
          parser.feed(chunk);
        });
        const done = () => {
          client.ended = true;
        };
        res.on('end', done);
        res.on('close', done);
        res.on('error', done);
        resolve(client);
      },
    );
    req.on('error', reject);
  });
}
