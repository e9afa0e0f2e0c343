/**
 * The API's configuration (lib/config/core.ts).
 *
 * Its own settings (environment variable → meaning, default):
 * - API_HOST / API_PORT: REST listener (127.0.0.1 / 8085); the pages reach it through the gateway on 8080.
 * - API_TRUST_PROXY: comma-separated addresses/CIDRs of reverse proxies whose X-Forwarded-For the API
 *   believes, so the per-IP limit counts the browser, not the gateway (127.0.0.1,::1; `none` = no proxy).
 * - RATE_LIMIT_MAX / RATE_LIMIT_WINDOW_MS: anonymous REST limit per IP (100 per 60000 ms, seed 000 "Limits").
 * - RATE_LIMIT_REDIS_URL: `redis://[user:password@]host:port[/db]` (or `rediss://`) of a Redis shared by every
 *   API node, so a key or IP has one budget across nodes; keys `<TOPIC_NAMESPACE>rate-limit:…`. Redis down: requests
 *   pass unlimited (fail open, logged, metric). Empty: counters per process, N nodes allow N × the limit ('').
 * - PUBLIC_DIR: static demo pages (public/ of the repository).
 * - API_ENGINE_URL: the round engine's HTTP origin, whose internal cash-out decision the API asks for
 *   (http://API_HOST:8081, the engine's default port on the same host).
 * - PUBLIC_BASE_URL: origin players reach the pages through, the start of every `game_url` of
 *   POST /games/request-access (http://127.0.0.1:8080, the gateway).
 * Shared: KAFKA_*, TOPIC_*, DATABASE_*, AUTH_*, LOG_LEVEL, SHUTDOWN_TIMEOUT_MS (lib/config/shared.ts).
 */
import { resolve } from 'node:path';
import { z } from 'zod';
import {
  APP_ROOT,
  configLoader,
  csv,
  host,
  int,
  localOrigin,
  originUrl,
  port,
  section,
} from '../../lib/config/core.ts';
import { authSection, dbSection, kafkaSection, processSection } from '../../lib/config/shared.ts';

export const apiSection = section({
  name: 'api',
  // Not `API_`: too common a prefix in other software's settings to call every such variable a typo.
  prefixes: ['RATE_LIMIT_'],
  shape: {
    API_HOST: host.default('127.0.0.1'),
    API_PORT: port.default(8085),
    API_TRUST_PROXY: csv.default(['127.0.0.1', '::1']),
    RATE_LIMIT_MAX: int(1, 10_000_000).default(100),
    RATE_LIMIT_WINDOW_MS: int(1000, 86_400_000).default(60_000),
    RATE_LIMIT_REDIS_URL: z
      .string()
      .regex(
        /^rediss?:\/\/([^\s@/]*@)?(\[[0-9a-fA-F:.]+\]|[^\s@/:[\]]+):\d{1,5}(\/\d{1,2})?$/,
        'redis://[user:password@]host:port[/db]',
      )
      .default(''),
    API_ENGINE_URL: originUrl.optional(),
    PUBLIC_DIR: z.string().min(1).default(resolve(APP_ROOT, 'public')),
  },
  build: (r) => ({
    host: r.API_HOST,
    port: r.API_PORT,
    /** Trusted reverse-proxy addresses; empty when API_TRUST_PROXY is `none`. */
    trustProxy: r.API_TRUST_PROXY.filter((a) => a !== 'none') as readonly string[],
    rateLimitMax: r.RATE_LIMIT_MAX,
    rateLimitWindowMs: r.RATE_LIMIT_WINDOW_MS,
    /** Shared rate-limit store (`redis://…`), or '' for per-process counters. */
    rateLimitRedisUrl: r.RATE_LIMIT_REDIS_URL,
    publicDir: r.PUBLIC_DIR,
    /** The round engine's origin (internal cash-out decisions), without a trailing slash. */
    engineUrl: (r.API_ENGINE_URL ?? localOrigin(r.API_HOST, 8081)).replace(/\/$/, ''),
  }),
});

/** Game access sessions (seed 001). */
export const accessSection = section({
  name: 'access',
  prefixes: ['PUBLIC_BASE_URL'],
  shape: { PUBLIC_BASE_URL: originUrl.default('http://127.0.0.1:8080') },
  /** Origin of the player pages, without a trailing slash. */
  build: (r) => ({ publicBaseUrl: r.PUBLIC_BASE_URL.replace(/\/$/, '') }),
});

/** The API's validated, frozen configuration. @throws ConfigError naming each bad or unknown setting. */
export const loadApiConfig = configLoader([
  kafkaSection,
  dbSection,
  processSection,
  authSection,
  apiSection,
  accessSection,
]);
export type ApiConfig = ReturnType<typeof loadApiConfig>;
