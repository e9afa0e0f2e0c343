/**
 * Loads uWebSockets.js and refuses its pure-JS fallback (DESIGN.md "Runtime pieces"). The npm
 * build (`@trufflesuite/uws-js-unofficial`) ships native binaries for Node 16/18/20 only and, when
 * none loads (another Node ABI, another platform, or `UWS_USE_FALLBACK` set), silently returns a
 * slow server built on `ws` with a console warning. The edge's fan-out figures need the native
 * server, so start-up fails instead.
 */

import type * as Uws from 'uWebSockets.js';
import { createRequire } from 'node:module';
import { AppError } from '../../../../lib/errors.ts';

export type { Uws };

/** The native uWebSockets.js binary did not load. */
export class NativeUwsUnavailableError extends AppError {
  constructor(message: string, cause?: unknown) {
    super('UWS_NATIVE_UNAVAILABLE', message, { cause });
  }
}

const require = createRequire(import.meta.url);

/**
 * The native uWebSockets.js module.
 * @throws NativeUwsUnavailableError when the package resolved to its pure-JS fallback.
 */
export function loadNativeUws(): typeof Uws {
  const binary = `uWebSockets.js/binaries/uws_${process.platform}_${process.arch}_${process.versions.modules}.node`;
  const hint =
    `uWebSockets.js has no native build for Node ${process.versions.node} (ABI ${process.versions.modules}) ` +
    `on ${process.platform}-${process.arch}; run the edge on Node 20 (package.json engines) and unset UWS_USE_FALLBACK`;
  let native: unknown;
  try {
    native = require(binary);
  } catch (err) {
    throw new NativeUwsUnavailableError(hint, err);
  }
  const loaded = require('uWebSockets.js') as typeof Uws;
  // Same object only when the package's own loader took the native path.
  if (loaded !== native) throw new NativeUwsUnavailableError(`${hint} (the package loaded its JS fallback)`);
  return loaded;
}
