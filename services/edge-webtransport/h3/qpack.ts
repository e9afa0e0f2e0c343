/**
 * QPACK field sections (RFC 9204) restricted to the static table and literals. This server
 * announces a dynamic table capacity of 0 (SETTINGS_QPACK_MAX_TABLE_CAPACITY, the default), so a
 * peer may not reference a dynamic table (§3.2.3); a section that does is rejected. That keeps
 * the one request a WebTransport session starts with (the extended CONNECT of RFC 9220) and its
 * response within a few hundred lines, with no encoder or decoder stream state.
 */
import { WebTransportError } from '../errors.ts';
import { huffmanDecode } from './huffman.ts';
import { type Field, STATIC_TABLE } from './static-table.ts';

export type { Field };

/** A field section that cannot be decoded, or that uses the dynamic table. */
export class QpackError extends WebTransportError {
  declare readonly code: 'QPACK_INVALID';

  constructor(message: string) {
    super('QPACK_INVALID', message);
  }
}

const utf8 = new TextDecoder('utf-8', { fatal: false });
const utf8Encoder = new TextEncoder();

/** Prefixed integer (RFC 7541 §5.1) with `bits` low bits in the byte at `pos`. */
export function readPrefixInt(buf: Uint8Array, pos: number, bits: number): { value: number; next: number } {
  if (pos >= buf.length) throw new QpackError('field section truncated');
  const max = (1 << bits) - 1;
  let value = (buf[pos] as number) & max;
  let next = pos + 1;
  if (value < max) return { value, next };
  let shift = 0;
  for (;;) {
    if (next >= buf.length) throw new QpackError('field section truncated in an integer');
    const b = buf[next++] as number;
    value += (b & 0x7f) * 2 ** shift;
    shift += 7;
    if ((b & 0x80) === 0) break;
    if (shift > 28) throw new QpackError('integer too large');
  }
  return { value, next };
}

/** Appends a prefixed integer whose first byte carries `flags` above the `bits` low bits. */
export function writePrefixInt(out: number[], bits: number, flags: number, value: number): void {
  const max = (1 << bits) - 1;
  if (value < max) {
    out.push(flags | value);
    return;
  }
  out.push(flags | max);
  let rest = value - max;
  while (rest >= 0x80) {
    out.push((rest % 0x80) | 0x80);
    rest = Math.floor(rest / 0x80);
  }
  out.push(rest);
}

/** String literal: H flag just above a `bits`-bit length prefix, then the octets (§4.1.2). */
function readString(buf: Uint8Array, pos: number, bits: number): { value: string; next: number } {
  if (pos >= buf.length) throw new QpackError('field section truncated');
  const huffman = ((buf[pos] as number) >> bits) & 1;
  const { value: len, next } = readPrefixInt(buf, pos, bits);
  if (next + len > buf.length) throw new QpackError('string literal runs past the field section');
  const raw = buf.subarray(next, next + len);
  let bytes: Uint8Array;
  try {
    bytes = huffman ? huffmanDecode(raw) : raw;
  } catch (err) {
    throw new QpackError(`bad Huffman string: ${(err as Error).message}`);
  }
  return { value: utf8.decode(bytes), next: next + len };
}

function staticEntry(index: number): Field {
  const e = STATIC_TABLE[index];
  if (!e) throw new QpackError(`static table index ${index} out of range`);
  return e;
}

/**
 * Decodes an encoded field section (the payload of a HEADERS frame).
 * @returns the field lines in order; names as sent (HTTP/3 requires lower case).
 * @throws QpackError for truncation, an unknown static index, a bad Huffman string, or any
 *   reference to the dynamic table.
 */
export function decodeFieldSection(buf: Uint8Array): Field[] {
  const ric = readPrefixInt(buf, 0, 8);
  if (ric.value !== 0) throw new QpackError('dynamic table references are not accepted (capacity 0)');
  let pos = readPrefixInt(buf, ric.next, 7).next; // sign and delta base: meaningless without a dynamic table
  const fields: Field[] = [];
  while (pos < buf.length) {
    const b = buf[pos] as number;
    if (b & 0x80) {
      // Indexed field line: 1 T index(6+)
      if (!(b & 0x40)) throw new QpackError('dynamic table references are not accepted (capacity 0)');
      const { value, next } = readPrefixInt(buf, pos, 6);
      fields.push(staticEntry(value));
      pos = next;
    } else if (b & 0x40) {
      // Literal field line with name reference: 01 N T index(4+), value
      if (!(b & 0x10)) throw new QpackError('dynamic table references are not accepted (capacity 0)');
      const name = readPrefixInt(buf, pos, 4);
      const value = readString(buf, name.next, 7);
      fields.push([staticEntry(name.value)[0], value.value]);
      pos = value.next;
    } else if (b & 0x20) {
      // Literal field line with literal name: 001 N H nameLen(3+), name, value
      const name = readString(buf, pos, 3);
      const value = readString(buf, name.next, 7);
      fields.push([name.value, value.value]);
      pos = value.next;
    } else {
      // 0001 (post-base index) and 0000 (post-base name reference) both need a dynamic table.
      throw new QpackError('dynamic table references are not accepted (capacity 0)');
    }
  }
  return fields;
}

const exactIndex = new Map<string, number>();
const nameIndex = new Map<string, number>();
STATIC_TABLE.forEach(([name, value], i) => {
  const key = `${name}\u0000${value}`;
  if (!exactIndex.has(key)) exactIndex.set(key, i);
  if (!nameIndex.has(name)) nameIndex.set(name, i);
});

/**
 * Encodes fields as a field section using the static table where it matches and plain
 * (non-Huffman) literals otherwise. Pseudo-fields must come first (RFC 9114 §4.3); the caller
 * orders them.
 */
export function encodeFieldSection(fields: readonly Field[]): Uint8Array {
  const out: number[] = [0x00, 0x00];
  for (const [name, value] of fields) {
    const exact = exactIndex.get(`${name}\u0000${value}`);
    const v = utf8Encoder.encode(value);
    if (exact !== undefined) {
      writePrefixInt(out, 6, 0xc0, exact);
      continue;
    }
    const byName = nameIndex.get(name);
    if (byName !== undefined) {
      writePrefixInt(out, 4, 0x50, byName);
    } else {
      const n = utf8Encoder.encode(name);
      writePrefixInt(out, 3, 0x20, n.length);
      out.push(...n);
    }
    writePrefixInt(out, 7, 0x00, v.length);
    out.push(...v);
  }
  return Uint8Array.from(out);
}
