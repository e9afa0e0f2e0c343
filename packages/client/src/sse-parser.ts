/**
 * A text/event-stream parser (WHATWG HTML "Server-sent events", §9.2.6): lines into events with
 * `event`, `data` and `id`, comments apart. The SSE transport reads streams with fetch (headers
 * and resume under its own control), so it cannot use EventSource's parser.
 */

export interface SseMessage {
  readonly event: string;
  readonly data: string;
  /** The last id seen on the stream so far (it persists across events). */
  readonly id: string;
}

/** Feeds text chunks; calls `onEvent` per dispatched event and `onComment` per comment line. */
export class SseParser {
  private buf = '';
  private event = '';
  private data: string[] = [];
  private id = '';

  constructor(
    private readonly onEvent: (m: SseMessage) => void,
    private readonly onComment: (text: string) => void = () => {},
  ) {}

  feed(chunk: string): void {
    this.buf += chunk;
    for (;;) {
      const m = /\r\n|\r|\n/.exec(this.buf);
      if (!m) return;
      const line = this.buf.slice(0, m.index);
      this.buf = this.buf.slice(m.index + m[0].length);
      this.line(line);
    }
  }

  private line(line: string): void {
    if (line === '') {
      this.dispatch();
      return;
    }
    if (line.startsWith(':')) {
      this.onComment(line.slice(1).trimStart());
      return;
    }
    const colon = line.indexOf(':');
    const field = colon < 0 ? line : line.slice(0, colon);
    let value = colon < 0 ? '' : line.slice(colon + 1);
    if (value.startsWith(' ')) value = value.slice(1);
    if (field === 'event') this.event = value;
    else if (field === 'data') this.data.push(value);
    else if (field === 'id' && !value.includes('\0')) this.id = value;
  }

  private dispatch(): void {
    if (this.data.length > 0)
      this.onEvent({ event: this.event || 'message', data: this.data.join('\n'), id: this.id });
    this.event = '';
    this.data = [];
  }
}
