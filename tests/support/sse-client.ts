/**
 * A minimal SSE client for the edge's tests (not a test file): node:http, so the raw wire text,
 * the response headers and the socket (to stop reading) are all visible.
 */
import { get, type IncomingMessage } from 'node:http';

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
  /** Complete blocks received so far, parsed. */
  readonly events: SseEvent[];
  ended: boolean;
  /** Events with an `event` field (initial, message), in order. */
  named(): SseEvent[];
  close(): void;
}

function parseBlock(block: string): SseEvent {
  const out: { event?: string; id?: string; data?: string; comments: string[] } = { comments: [] };
  for (const line of block.split('\n')) {
    const colon = line.indexOf(':');
    const name = colon < 0 ? line : line.slice(0, colon);
    let value = colon < 0 ? '' : line.slice(colon + 1);
    if (value.startsWith(' ')) value = value.slice(1);
    if (name === '') out.comments.push(value);
    else if (name === 'event' || name === 'id' || name === 'data') out[name] = value;
  }
  return out;
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
        let pending = '';
        const client: SseClient = {
          res,
          raw: '',
          events: [],
          ended: false,
          named: () => client.events.filter((e) => e.event !== undefined),
          close: () => req.destroy(),
        };
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => {
          client.raw += chunk;
          pending += chunk;
          let at = pending.indexOf('\n\n');
          while (at >= 0) {
            client.events.push(parseBlock(pending.slice(0, at)));
            pending = pending.slice(at + 2);
            at = pending.indexOf('\n\n');
          }
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
