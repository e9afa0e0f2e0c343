import { describe, expect, it } from 'vitest';
import { decodeConnectRequest, encodeConnectResponse, parseConnectRequest } from './connect.ts';
import {
  datagramPrefix,
  decodeSettings,
  encodeSettingsFrame,
  FRAME,
  FrameError,
  peerSupportsWebTransport,
  readTlv,
  SETTING,
  serverControlStreamPreamble,
} from './frames.ts';
import { CODE_LENGTHS, HuffmanError, huffmanDecode } from './huffman.ts';
import { decodeFieldSection, encodeFieldSection, QpackError } from './qpack.ts';
import { TlvReader } from './reader.ts';
import { encodeVarint, readVarint } from './varint.ts';

const hex = (s: string) => Uint8Array.from(s.trim().split(/\s+/), (x) => Number.parseInt(x, 16));
const text = (b: Uint8Array) => new TextDecoder().decode(b);

/**
 * The request stream of a real WebTransport session opened by Chromium 156 for
 * `https://127.0.0.1:4499/wt?game=crash&token=abc` from the page origin http://127.0.0.1:4498:
 * a HEADERS frame with Huffman-coded :authority and :path, then a frame of reserved type.
 */
const CHROMIUM_CONNECT = hex(`
  01 40 63 00 00 d7 cf 50 8a 08 9d 5c 0b 81 70 dc 69 a7 df 51 92 63 c2 7f c9 87 49 60 25 83 44
  ff 09 3f 52 d5 00 e3 27 2f 00 b9 5d 87 49 c8 7a 3f 89 f0 58 d3 60 ea 45 67 b1 3f 2f 0e 41 48
  b7 82 c6 9b 07 52 2b 3d 89 5a 74 a6 b6 56 92 c1 ca 90 0b 01 31 5f 4b 90 9d 29 ae e3 0c 04 4e
  ae 05 c0 b8 6e 34 d3 ef 7f 00`);
/** That session's client SETTINGS (after the control stream type byte 00). */
const CHROMIUM_SETTINGS = hex(`
  04 29 01 80 01 00 00 06 80 00 40 00 07 40 64 33 01 80 ff d2 77 01 ab 60 37 42 01 c0 00 00 14
  25 e0 09 32 c0 00 00 00 cf 22 f7 29 c0 00 00 08 54 5d fe fc 01 0a`);

describe('QUIC varints (RFC 9000 §16, Appendix A.1 examples)', () => {
  it.each([
    ['9d 7f 3e 7d', 494_878_333],
    ['7b bd', 15_293],
    ['25', 37],
    ['40 25', 37],
  ])('decodes %s as %d', (bytes, value) => {
    expect(readVarint(hex(bytes), 0)).toEqual({ value, next: hex(bytes).length });
  });

  it('encodes in the shortest form and reports a truncated varint as incomplete', () => {
    expect([...encodeVarint(15_293)]).toEqual([0x7b, 0xbd]);
    expect([...encodeVarint(494_878_333)]).toEqual([0x9d, 0x7f, 0x3e, 0x7d]);
    expect(readVarint(encodeVarint(2 ** 40 + 5), 0)).toEqual({ value: 2 ** 40 + 5, next: 8 });
    expect(readVarint(hex('9d 7f'), 0)).toBeUndefined();
    expect(() => encodeVarint(-1)).toThrow(RangeError);
  });
});

describe('HPACK Huffman decoding (RFC 7541 Appendix B and C.4)', () => {
  it('has a complete canonical code (Kraft sum exactly 1)', () => {
    expect(CODE_LENGTHS.reduce((sum, len) => sum + 2 ** -len, 0)).toBe(1);
  });

  it.each([
    ['f1 e3 c2 e5 f2 3a 6b a0 ab 90 f4 ff', 'www.example.com'],
    ['a8 eb 10 64 9c bf', 'no-cache'],
    ['25 a8 49 e9 5b a9 7d 7f', 'custom-key'],
    ['25 a8 49 e9 5b b8 e8 b4 bf', 'custom-value'],
  ])('decodes %s', (bytes, expected) => {
    expect(text(huffmanDecode(hex(bytes)))).toBe(expected);
  });

  it('rejects padding that is not a prefix of EOS and padding of 8 bits or more', () => {
    expect(() => huffmanDecode(hex('f1 e3 c2 e5 f2 3a 6b a0 ab 90 f4 fe'))).toThrow(HuffmanError);
    expect(() => huffmanDecode(hex('ff'))).toThrow(HuffmanError);
  });
});

describe('QPACK field sections (RFC 9204)', () => {
  it("decodes Chromium's CONNECT request", () => {
    const frame = readTlv(CHROMIUM_CONNECT, 0, 16_384);
    expect(frame?.type).toBe(FRAME.HEADERS);
    expect(decodeFieldSection(frame?.payload ?? new Uint8Array())).toEqual([
      [':scheme', 'https'],
      [':method', 'CONNECT'],
      [':authority', '127.0.0.1:4499'],
      [':path', '/wt?game=crash&token=abc'],
      [':protocol', 'webtransport'],
      ['sec-webtransport-http3-draft02', '1'],
      ['origin', 'http://127.0.0.1:4498'],
    ]);
  });

  it('round-trips fields through the static table and literals', () => {
    const fields = [
      [':status', '404'],
      [':status', '429'],
      ['content-type', 'application/json'],
      ['x-reason', 'a'.repeat(300)],
    ] as const;
    expect(decodeFieldSection(encodeFieldSection(fields))).toEqual(fields);
    expect([...encodeFieldSection([[':status', '200']])]).toEqual([0x00, 0x00, 0xc0 | 25]);
  });

  it.each([
    ['a dynamic table reference', '01 00 80'],
    ['a dynamic indexed line', '00 00 80'],
    ['a post-base reference', '00 00 10'],
    ['a truncated literal', '00 00 5f 0a 85 61'],
    ['an unknown static index', '00 00 ff 40'],
  ])('rejects %s', (_what, bytes) => {
    expect(() => decodeFieldSection(hex(bytes))).toThrow(QpackError);
  });
});

describe('HTTP/3 frames and settings', () => {
  it("reads Chromium's SETTINGS as supporting WebTransport with datagrams", () => {
    const frame = readTlv(CHROMIUM_SETTINGS, 0, 1024);
    expect(frame?.type).toBe(FRAME.SETTINGS);
    const settings = decodeSettings(frame?.payload ?? new Uint8Array());
    expect(settings.get(SETTING.H3_DATAGRAM)).toBe(1);
    expect(peerSupportsWebTransport(settings)).toBe(true);
    expect(peerSupportsWebTransport(new Map([[SETTING.H3_DATAGRAM, 1]]))).toBe(false);
  });

  it('announces extended CONNECT, datagrams and WebTransport on its control stream', () => {
    const pre = serverControlStreamPreamble(1);
    expect(pre[0]).toBe(0x00);
    const settings = decodeSettings(readTlv(pre, 1, 1024)?.payload ?? new Uint8Array());
    expect(settings.get(SETTING.ENABLE_CONNECT_PROTOCOL)).toBe(1);
    expect(settings.get(SETTING.QPACK_MAX_TABLE_CAPACITY)).toBe(0);
    expect(peerSupportsWebTransport(settings)).toBe(true);
  });

  it('rejects repeated settings and oversized frames, and waits for incomplete ones', () => {
    const twice = encodeSettingsFrame(new Map([[1, 0]]));
    const payload = new Uint8Array([0x01, 0x00, 0x01, 0x00]);
    expect(() => decodeSettings(payload)).toThrow(FrameError);
    expect(readTlv(twice.subarray(0, 2), 0, 100)).toBeUndefined();
    expect(() => readTlv(hex('01 44 00'), 0, 100)).toThrow(FrameError);
  });

  it('prefixes datagrams with the quarter stream id of the session', () => {
    expect([...datagramPrefix(0)]).toEqual([0]);
    expect([...datagramPrefix(8)]).toEqual([2]);
  });

  it('reads frames split across chunks', async () => {
    const bytes = CHROMIUM_CONNECT;
    const stream = new ReadableStream<Uint8Array>({
      start(c) {
        for (let i = 0; i < bytes.length; i += 7) c.enqueue(bytes.subarray(i, i + 7));
        c.close();
      },
    });
    const reader = new TlvReader(stream.getReader(), 16_384);
    expect((await reader.tlv())?.type).toBe(FRAME.HEADERS);
    await expect(reader.tlv()).rejects.toThrow(FrameError); // the reserved frame is cut short
  });
});

describe('CONNECT request and response', () => {
  it('accepts an extended CONNECT for webtransport over https', () => {
    const r = decodeConnectRequest(readTlv(CHROMIUM_CONNECT, 0, 16_384)?.payload ?? new Uint8Array());
    expect(r).toEqual({
      ok: true,
      request: {
        authority: '127.0.0.1:4499',
        path: '/wt?game=crash&token=abc',
        origin: 'http://127.0.0.1:4498',
      },
    });
  });

  it.each([
    [
      [
        [':method', 'GET'],
        [':scheme', 'https'],
        [':authority', 'a'],
        [':path', '/wt'],
      ],
      /extended CONNECT/,
    ],
    [
      [
        [':method', 'CONNECT'],
        [':protocol', 'websocket'],
        [':scheme', 'https'],
      ],
      /webtransport/,
    ],
    [
      [
        [':method', 'CONNECT'],
        [':protocol', 'webtransport'],
        [':scheme', 'http'],
      ],
      /https/,
    ],
    [
      [
        [':method', 'CONNECT'],
        [':protocol', 'webtransport'],
        [':scheme', 'https'],
        [':path', '/wt'],
      ],
      /:authority/,
    ],
    [
      [
        [':method', 'CONNECT'],
        [':method', 'CONNECT'],
      ],
      /twice/,
    ],
  ] as const)('refuses a malformed request with 400 (%#)', (fields, error) => {
    const r = parseConnectRequest(fields);
    expect(r.ok).toBe(false);
    if (!r.ok) {
      expect(r.status).toBe(400);
      expect(r.error).toMatch(error);
    }
  });

  it('answers 200 with the draft header browsers check, and refusals with a JSON reason', () => {
    const ok = readTlv(encodeConnectResponse(200), 0, 1024);
    expect(decodeFieldSection(ok?.payload ?? new Uint8Array())).toEqual([
      [':status', '200'],
      ['sec-webtransport-http3-draft', 'draft02'],
    ]);
    const bytes = encodeConnectResponse(404, 'Game not found');
    const headers = readTlv(bytes, 0, 1024);
    const body = headers && readTlv(bytes, headers.next, 1024);
    expect(decodeFieldSection(headers?.payload ?? new Uint8Array())).toContainEqual([':status', '404']);
    expect(body?.type).toBe(FRAME.DATA);
    expect(JSON.parse(text(body?.payload ?? new Uint8Array()))).toEqual({
      error: 'Game not found',
      success: false,
    });
  });
});
