/**
 * The session's reliable stream ("the catch-up on a reliable stream, live rounds on
 * datagrams"): one server-opened WebTransport unidirectional stream (type 0x54, then the session
 * id), opened on first use, carrying one JSON text per line. Writes are queued in order; the bytes
 * handed over and not yet accepted by QUIC are counted, so a catch-up can wait (backpressure).
 */
import { STREAM } from './h3/frames.ts';
import { concatBytes, encodeVarint } from './h3/varint.ts';

const encoder = new TextEncoder();

/** What the stream needs of the connection (a fake in tests). */
export interface StreamOpener {
  createUnidirectionalStream(): Promise<WritableStream<Uint8Array>>;
}

export class ReliableStream {
  private writer: WritableStreamDefaultWriter<Uint8Array> | undefined;
  private tail: Promise<void> = Promise.resolve();
  private pending = 0;
  private broken = false;
  private ended = false;

  constructor(
    private readonly conn: StreamOpener,
    private readonly sessionId: number,
  ) {}

  /** Bytes queued and not yet accepted by the QUIC stream. */
  get pendingBytes(): number {
    return this.pending;
  }

  /** Whether the stream has been opened (something was written). */
  get opened(): boolean {
    return this.writer !== undefined || this.pending > 0;
  }

  /** Queues one line (`text` plus a newline); ignored once the stream ended or failed. */
  line(text: string): void {
    if (this.ended || this.broken) return;
    const bytes = encoder.encode(`${text}\n`);
    this.pending += bytes.length;
    this.tail = this.tail
      .then(async () => {
        const w = await this.open();
        await w.write(bytes);
      })
      .catch(() => {
        this.broken = true; // the client reset it or the session is gone
      })
      .finally(() => {
        this.pending -= bytes.length;
      });
  }

  /** Ends the stream after what is queued (FIN). */
  finish(): Promise<void> {
    if (this.ended) return this.tail;
    this.ended = true;
    this.tail = this.tail
      .then(async () => (await this.open()).close())
      .catch(() => {
        this.broken = true;
      });
    return this.tail;
  }

  private async open(): Promise<WritableStreamDefaultWriter<Uint8Array>> {
    if (this.writer) return this.writer;
    const s = await this.conn.createUnidirectionalStream();
    const w = s.getWriter();
    await w.write(concatBytes(encodeVarint(STREAM.WEBTRANSPORT), encodeVarint(this.sessionId)));
    this.writer = w;
    return w;
  }
}
