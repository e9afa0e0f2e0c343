/**
 * Reads varints and type-length-value units (frames, capsules) from a byte stream whose chunks
 * split them anywhere. Bounded: a unit larger than `maxUnitBytes` is an error, so a peer cannot
 * make the server buffer without limit.
 */
import { FrameError, readTlv, type Tlv } from './frames.ts';
import { readVarint } from './varint.ts';

export class TlvReader {
  private buf: Uint8Array<ArrayBufferLike> = new Uint8Array(0);
  private ended = false;

  constructor(
    private readonly reader: ReadableStreamDefaultReader<Uint8Array>,
    /** Largest payload accepted, bytes. */
    private readonly maxUnitBytes: number,
  ) {}

  /** Reads one more chunk; false at the end of the stream. */
  private async fill(): Promise<boolean> {
    if (this.ended) return false;
    const { value, done } = await this.reader.read();
    if (done) {
      this.ended = true;
      return false;
    }
    if (!value || value.length === 0) return true;
    if (this.buf.length === 0) {
      this.buf = value;
    } else {
      const merged = new Uint8Array(this.buf.length + value.length);
      merged.set(this.buf, 0);
      merged.set(value, this.buf.length);
      this.buf = merged;
    }
    return true;
  }

  /**
   * The next varint (a stream type, a session id), or undefined at a clean end of stream.
   * @throws FrameError when the stream ends inside the varint.
   */
  async varint(): Promise<number | undefined> {
    for (;;) {
      const r = readVarint(this.buf, 0);
      if (r) {
        this.buf = this.buf.subarray(r.next);
        return r.value;
      }
      if (!(await this.fill())) {
        if (this.buf.length === 0) return undefined;
        throw new FrameError('stream ended inside a varint');
      }
    }
  }

  /**
   * The next unit, or undefined at a clean end of stream.
   * @throws FrameError when it is larger than allowed or the stream ends inside it.
   */
  async tlv(): Promise<Tlv | undefined> {
    for (;;) {
      const r = readTlv(this.buf, 0, this.maxUnitBytes);
      if (r) {
        this.buf = this.buf.subarray(r.next);
        return { ...r, next: 0 };
      }
      if (!(await this.fill())) {
        if (this.buf.length === 0) return undefined;
        throw new FrameError('stream ended inside a frame');
      }
    }
  }

  /** The next bytes as they come (what is buffered first), or undefined at the end of the stream. */
  async bytes(): Promise<Uint8Array | undefined> {
    if (this.buf.length === 0 && !(await this.fill())) return undefined;
    const out = this.buf;
    this.buf = new Uint8Array(0);
    return out;
  }

  /** Reads and drops everything until the stream ends or fails (keeps a stream the peer must not see closed open). */
  async discardAll(): Promise<void> {
    this.buf = new Uint8Array(0);
    try {
      while (await this.fill()) this.buf = new Uint8Array(0);
    } catch {
      // a reset stream or closed connection: nothing left to read
    }
  }

  /** Stops reading (STOP_SENDING on a QUIC stream); never throws. */
  async cancel(): Promise<void> {
    this.ended = true;
    await this.reader.cancel().catch(() => {});
  }
}
