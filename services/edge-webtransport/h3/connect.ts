/**
 * The extended CONNECT request that opens a WebTransport session (RFC 9220, RFC 9114 §4.4,
 * draft-ietf-webtrans-http3 §3) and the response to it. The response is written by this
 * server's own code rather than by `Deno.upgradeWebTransport`, which always answers 200 before
 * the application sees the URL: refusing a bad path or parameters with a real status (404, 400)
 * before the session exists is a requirement of the contract (docs/contract.md "Authentication").
 */
import { encodeTlv, FRAME } from './frames.ts';
import { decodeFieldSection, encodeFieldSection, type Field } from './qpack.ts';
import { concatBytes } from './varint.ts';

/** What the server needs of a CONNECT request. */
export interface ConnectRequest {
  readonly authority: string;
  /** Path and query, e.g. `/wt?game=crash`. */
  readonly path: string;
  readonly origin: string | undefined;
}

export type ConnectParse =
  | { readonly ok: true; readonly request: ConnectRequest }
  | { readonly ok: false; readonly status: 400; readonly error: string };

/**
 * Checks the pseudo-fields of a decoded request: `:method` CONNECT, `:protocol` webtransport,
 * `:scheme` https, and one `:authority` and `:path` each.
 */
export function parseConnectRequest(fields: readonly Field[]): ConnectParse {
  const pseudo = new Map<string, string>();
  let origin: string | undefined;
  for (const [name, value] of fields) {
    if (name.startsWith(':')) {
      if (pseudo.has(name)) return { ok: false, status: 400, error: `${name} given twice` };
      pseudo.set(name, value);
    } else if (name === 'origin') {
      origin = value;
    }
  }
  const bad = (error: string): ConnectParse => ({ ok: false, status: 400, error });
  if (pseudo.get(':method') !== 'CONNECT') return bad('expected an extended CONNECT request');
  if (pseudo.get(':protocol') !== 'webtransport') return bad('expected :protocol webtransport');
  if (pseudo.get(':scheme') !== 'https') return bad('expected :scheme https');
  const authority = pseudo.get(':authority');
  const path = pseudo.get(':path');
  if (!authority || !path?.startsWith('/')) return bad('missing :authority or :path');
  return { ok: true, request: { authority, path, origin } };
}

/**
 * Decodes a HEADERS frame payload into a request.
 * @throws QpackError when the field section does not decode.
 */
export function decodeConnectRequest(headersPayload: Uint8Array): ConnectParse {
  return parseConnectRequest(decodeFieldSection(headersPayload));
}

const encoder = new TextEncoder();

/**
 * The bytes of the response on the CONNECT stream.
 * - 200: a HEADERS frame with `sec-webtransport-http3-draft: draft02`, which Chrome checks to
 *   accept the session; the stream then stays open for the session's lifetime.
 * - any other status: a HEADERS frame with JSON content type and a DATA frame with
 *   `{"error": <reason>, "success": false}` (the REST error shape); the caller ends the stream.
 */
export function encodeConnectResponse(status: number, error?: string): Uint8Array {
  if (status === 200) {
    const fields: Field[] = [
      [':status', '200'],
      ['sec-webtransport-http3-draft', 'draft02'],
    ];
    return encodeTlv(FRAME.HEADERS, encodeFieldSection(fields));
  }
  const body = encoder.encode(JSON.stringify({ error: error ?? 'Request refused', success: false }));
  const fields: Field[] = [
    [':status', String(status)],
    ['content-type', 'application/json'],
    ['content-length', String(body.length)],
    ['access-control-allow-origin', '*'],
  ];
  return concatBytes(encodeTlv(FRAME.HEADERS, encodeFieldSection(fields)), encodeTlv(FRAME.DATA, body));
}
