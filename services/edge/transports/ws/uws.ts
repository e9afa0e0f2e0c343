/**
 * Loads uWebSockets.js (docs/architecture.md "Runtime pieces"): the official build republished on npm as
 * `@btc-vision/uwebsockets.js` (package.json pins it under the name `uWebSockets.js`), native binaries
 * for Node 20/22/24/25 and no pure-JS fallback. On a glibc older than 2.38 (Debian 12) the binaries
 * load once `npm install` has run scripts/uws-glibc.ts (docs/decisions/runtime/0002-uwebsockets-on-node-24-and-glibc.md).
 */

import type * as Uws from 'uWebSockets.js';
import { createRequire } from 'node:module';
import { AppError } from '../../../../lib/errors.ts';

export type { Uws };

/** The native uWebSockets.js binary did not load. */
export class NativeUwsUnavailableError extends AppError {
  declare readonly code: 'UWS_NATIVE_UNAVAILABLE';

  constructor(message: string, cause?: unknown) {
    super('UWS_NATIVE_UNAVAILABLE', message, { cause });
  }
}

const require = createRequire(import.meta.url);

/**
 * Largest request head uWebSockets.js reads (bytes; beyond it: 431). Its own default is 4 KiB
 * (the republish used before allowed more); 16 KiB is Node's HTTP/1 limit, which the edge's SSE
 * and gRPC proxy listeners have, so every HTTP/1 transport refuses the same heads. uWS reads it
 * from the environment once, when its binary loads.
 */
export const MAX_HEADERS_BYTES = 16 * 1024;

/**
 * The native uWebSockets.js module.
 * @throws NativeUwsUnavailableError when no binary loads for this Node (ABI) and platform, or the
 * binary refuses this glibc (scripts/uws-glibc.ts not run).
 */
export function loadNativeUws(): typeof Uws {
  try {
    process.env.UWS_HTTP_MAX_HEADERS_SIZE = String(MAX_HEADERS_BYTES);
    return require('uWebSockets.js') as typeof Uws;
  } catch (err) {
    throw new NativeUwsUnavailableError(
      `uWebSockets.js did not load on Node ${process.versions.node} (ABI ${process.versions.modules}) ` +
        `on ${process.platform}-${process.arch}: run the edge on Node 24 (package.json engines; ` +
        `scripts/node-env.sh) after npm install (scripts/uws-glibc.ts on glibc < 2.38)`,
      err,
    );
  }
}
