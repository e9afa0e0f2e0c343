/**
 * Loads uWebSockets.js (DESIGN.md "Runtime pieces"): the official build republished on npm as
 * `@btc-vision/uwebsockets.js` (package.json pins it under the name `uWebSockets.js`), native binaries
 * for Node 20/22/24/25 and no pure-JS fallback. On a glibc older than 2.38 (Debian 12) the binaries
 * load once `npm install` has run scripts/uws-glibc.ts (docs/decisions.md, issue 14).
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
 * @throws NativeUwsUnavailableError when no binary loads for this Node (ABI) and platform, or the
 * binary refuses this glibc (scripts/uws-glibc.ts not run).
 */
export function loadNativeUws(): typeof Uws {
  try {
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
