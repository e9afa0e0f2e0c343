/**
 * The gateway's configuration (lib/config/core.ts).
 *
 * Its own settings (environment variable → meaning, default):
 * - GATEWAY_HOST / GATEWAY_PORT: the one-origin reverse proxy of `npm start` (127.0.0.1 / 8080).
 * - GATEWAY_OPS_PORT: the gateway's own /health, /ready, /metrics on GATEWAY_HOST, apart from the
 *   proxied paths, where /metrics and /ready are the API's (8089; 0 = any free port).
 * - GATEWAY_API_URL, GATEWAY_EDGE_HTTP_URL, GATEWAY_EDGE_WS_URL, GATEWAY_WT_HTTP_URL: the upstreams
 *   (http://…). Unset: derived from API_HOST/API_PORT, EDGE_HOST/EDGE_HTTP_PORT, EDGE_HOST/EDGE_WS_PORT
 *   and WT_HOST/WT_HTTP_PORT (the upstreams' own settings, same defaults), a wildcard host (0.0.0.0, ::)
 *   read as 127.0.0.1.
 * - GATEWAY_API_SOCKET: the API's Unix socket for its proxy (only there does the API
 *   believe X-Forwarded-For, so the per-IP limits count the browsers, not the gateway). Unset: the
 *   API's own API_SOCKET (same default, .data/api/proxy.sock), unless GATEWAY_API_URL is set;
 *   `none`: over TCP to GATEWAY_API_URL (then every browser shares the gateway's IP budget).
 * - GATEWAY_CONSOLE_DIR: the built browser console served at /console/ (scripts/build-console.ts writes
 *   it; default .build/console/ under the app root).
 * Shared: LOG_LEVEL, SHUTDOWN_TIMEOUT_MS (lib/config/shared.ts).
 */
import { resolve } from 'node:path';
import { z } from 'zod';
import {
  APP_ROOT,
  configLoader,
  host,
  localOrigin,
  originUrl,
  port,
  section,
} from '../../lib/config/core.ts';
import { processSection } from '../../lib/config/shared.ts';

/** GATEWAY_API_SOCKET, else API_SOCKET unless an explicit GATEWAY_API_URL asks for TCP; '' = TCP. */
function apiSocketOf(explicit: string | undefined, apiUrl: string | undefined, apiSocket: string): string {
  const chosen = explicit ?? (apiUrl === undefined ? apiSocket : 'none');
  return chosen === 'none' ? '' : chosen;
}

export const gatewaySection = section({
  name: 'gateway',
  prefixes: ['GATEWAY_'],
  shape: {
    GATEWAY_HOST: host.default('127.0.0.1'),
    GATEWAY_PORT: port.default(8080),
    GATEWAY_OPS_PORT: port.default(8089),
    GATEWAY_API_URL: originUrl.optional(),
    GATEWAY_API_SOCKET: z.string().min(1).optional(),
    GATEWAY_EDGE_HTTP_URL: originUrl.optional(),
    GATEWAY_EDGE_WS_URL: originUrl.optional(),
    GATEWAY_WT_HTTP_URL: originUrl.optional(),
    GATEWAY_CONSOLE_DIR: z
      .string()
      .min(1)
      .default(resolve(APP_ROOT, '.build', 'console')),
    // The upstreams' listeners, read for the default upstream origins only.
    API_HOST: host.default('127.0.0.1'),
    API_PORT: port.default(8085),
    API_SOCKET: z.string().default(resolve(APP_ROOT, '.data', 'api', 'proxy.sock')),
    EDGE_HOST: host.default('127.0.0.1'),
    EDGE_HTTP_PORT: port.default(8086),
    EDGE_WS_PORT: port.default(8087),
    WT_HOST: host.default('127.0.0.1'),
    WT_HTTP_PORT: port.default(8088),
  },
  build: (r) => {
    const origin = (explicit: string | undefined, h: string, p: number) =>
      (explicit ?? localOrigin(h, p)).replace(/\/$/, '');
    return {
      host: r.GATEWAY_HOST,
      port: r.GATEWAY_PORT,
      /** The gateway's own /health, /ready, /metrics listener. */
      opsPort: r.GATEWAY_OPS_PORT,
      /** The built console's folder (absolute), served at /console/. */
      consoleDir: resolve(r.GATEWAY_CONSOLE_DIR),
      /** Upstream origins, without a trailing slash. */
      upstreams: {
        api: origin(r.GATEWAY_API_URL, r.API_HOST, r.API_PORT),
        /** The API's proxy socket, or '' to reach it over TCP at `api`. */
        apiSocket: apiSocketOf(r.GATEWAY_API_SOCKET, r.GATEWAY_API_URL, r.API_SOCKET),
        edgeHttp: origin(r.GATEWAY_EDGE_HTTP_URL, r.EDGE_HOST, r.EDGE_HTTP_PORT),
        edgeWs: origin(r.GATEWAY_EDGE_WS_URL, r.EDGE_HOST, r.EDGE_WS_PORT),
        wtHttp: origin(r.GATEWAY_WT_HTTP_URL, r.WT_HOST, r.WT_HTTP_PORT),
      },
    };
  },
});

/** The gateway's validated, frozen configuration. @throws ConfigError naming each bad or unknown setting. */
export const loadGatewayConfig = configLoader([processSection, gatewaySection]);
export type GatewayConfig = ReturnType<typeof loadGatewayConfig>;
