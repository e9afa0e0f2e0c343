/**
 * Errors of the WebTransport edge, on the project's base error (docs/conventions.md §6). Each
 * class lives beside the code that throws it (cert.ts, handshake.ts, h3/); its code is listed here.
 */
import { AppError } from '../../lib/errors.ts';

/** Codes of the WebTransport edge's errors; a code not listed here does not compile. */
export type WebTransportErrorCode =
  /** A certificate or key that cannot be used (cert.ts). */
  | 'CERTIFICATE_INVALID'
  /** An HTTP/3 frame, capsule or settings block that does not parse (h3/frames.ts). */
  | 'H3_FRAME_INVALID'
  /** A Huffman-coded string that breaks RFC 7541 §5.2 (h3/huffman.ts). */
  | 'HUFFMAN_INVALID'
  /** A QPACK field section that cannot be decoded (h3/qpack.ts). */
  | 'QPACK_INVALID'
  /** A WebTransport handshake that failed before a response could be sent (handshake.ts). */
  | 'HANDSHAKE_FAILED';

/** Base of the WebTransport edge's errors: an {@link AppError} whose code is one of {@link WebTransportErrorCode}. */
export abstract class WebTransportError extends AppError {
  declare readonly code: WebTransportErrorCode;

  constructor(code: WebTransportErrorCode, message: string) {
    super(code, message);
  }
}
