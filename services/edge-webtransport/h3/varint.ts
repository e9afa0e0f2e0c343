/**
 * QUIC variable-length integers (RFC 9000 §16): the two high bits of the first byte give the
 * length (1, 2, 4 or 8 bytes), the rest is the value, big-endian. HTTP/3 frame types, lengths,
 * stream types, settings and WebTransport session ids all use them.
 *
 * Values are JavaScript numbers: exact up to 2^53; larger ones (only GREASE setting ids reach
 * that far, RFC 9114 §7.2.4.1) decode approximately, which is harmless because they are ignored.
 */

/** Largest value a varint holds (2^62 - 1), as an approximate number. */
export const MAX_VARINT = 2 ** 62 - 1;

/** Bytes needed to encode `v`. @throws RangeError for a negative, fractional or too large value. */
export function varintLength(v: number): 1 | 2 | 4 | 8 {
  if (!Number.isInteger(v) || v < 0 || v > MAX_VARINT) throw new RangeError(`not a QUIC varint: ${v}`);
  if (v < 0x40) return 1;
  if (v < 0x4000) return 2;
  if (v < 0x4000_0000) return 4;
  return 8;
}

/** Writes `v` at `offset` of `out` (which must have room); returns the offset after it. */
export function writeVarint(out: Uint8Array, offset: number, v: number): number {
  const len = varintLength(v);
  const view = new DataView(out.buffer, out.byteOffset, out.byteLength);
  switch (len) {
    case 1:
      view.setUint8(offset, v);
      break;
    case 2:
      view.setUint16(offset, 0x4000 | v);
      break;
    case 4:
      view.setUint32(offset, (0x8000_0000 | v) >>> 0);
      break;
    case 8: {
      const hi = Math.floor(v / 2 ** 32);
      view.setUint32(offset, (0xc000_0000 | hi) >>> 0);
      view.setUint32(offset + 4, v % 2 ** 32);
      break;
    }
  }
  return offset + len;
}

/** `v` as a varint. @throws RangeError like `varintLength`. */
export function encodeVarint(v: number): Uint8Array {
  const out = new Uint8Array(varintLength(v));
  writeVarint(out, 0, v);
  return out;
}

/**
 * Reads a varint at `offset`.
 * @returns the value and the offset after it, or undefined when `buf` ends inside the varint
 *   (the caller waits for more bytes).
 */
export function readVarint(buf: Uint8Array, offset: number): { value: number; next: number } | undefined {
  if (offset >= buf.length) return undefined;
  const first = buf[offset] as number;
  const len = 1 << (first >> 6);
  if (offset + len > buf.length) return undefined;
  const view = new DataView(buf.buffer, buf.byteOffset, buf.byteLength);
  let value: number;
  switch (len) {
    case 1:
      value = first & 0x3f;
      break;
    case 2:
      value = view.getUint16(offset) & 0x3fff;
      break;
    case 4:
      value = view.getUint32(offset) & 0x3fff_ffff;
      break;
    default:
      value = (view.getUint32(offset) & 0x3fff_ffff) * 2 ** 32 + view.getUint32(offset + 4);
  }
  return { value, next: offset + len };
}

/** Concatenates byte arrays. */
export function concatBytes(...parts: readonly Uint8Array[]): Uint8Array {
  let n = 0;
  for (const p of parts) n += p.length;
  const out = new Uint8Array(n);
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}
