/**
 * The API's configuration (lib/config/core.ts).
 *
 * Its own settings (environment variable → meaning, default):
 * - API_HOST / API_PORT: REST listener (127.0.0.1 / 8085); the pages reach it through the gateway on 8080.
 * - API_SOCKET: a Unix socket the API also listens on for its reverse proxy (the gateway, nginx): only
 *   requests arriving there have their X-Forwarded-For believed (the client named last in it is the
 *   IP the per-IP limits count); on the TCP listener the peer address counts, whatever the headers say.
 *   Who may connect is decided by the file's permissions (.data/api/proxy.sock; `none` = no socket).
 * - API_SOCKET_MODE: permissions of that socket file, octal (600: only the API's own user; 666 when
 *   the socket sits on a volume shared with the proxy's container only, as in docker-compose.yml).
 * - API_TRUST_PROXY: comma-separated addresses/CIDRs of TCP peers whose X-Forwarded-For is believed too,
 *   for a proxy on another host whose address no untrusted client can use (`none`, the default).
 * - RATE_LIMIT_MAX / RATE_LIMIT_WINDOW_MS: anonymous REST limit per IP (100 per 60000 ms, docs/contract.md "Limits").
 * - RATE_LIMIT_AUTH_FAILURES: 401 answers one IP may get per RATE_LIMIT_WINDOW_MS; past it, its
 *   requests carrying a credential are 429 until the window ends (20; limits.ts). The edges spend and
 *   honour the same budget (lib/auth/failure-budget.ts), in the same Redis when there is one.
 * - RATE_LIMIT_BROWSER_KEYS_PER_IP / RATE_LIMIT_BROWSER_KEYS_PER_DOMAIN / RATE_LIMIT_BROWSER_KEYS_WINDOW_MS: new
 *   browser keys one IP, and one bound_domain, may mint per window (3 / 100 per 3600000 ms; limits.ts).
 * - RATE_LIMIT_REDIS_URL: `redis://[user:password@]host:port[/db]` (or `rediss://`) of a Redis shared by every
 *   API node, so a key or IP has one budget across nodes; keys `<TOPIC_NAMESPACE>rate-limit:…`. Redis down: requests
 *   pass unlimited (fail open, logged, metric). Empty: counters per process, N nodes allow N × the limit ('').
 * - PUBLIC_DIR: static demo pages (public/ of the repository).
 * - API_ENGINE_URL: the round engine's HTTP origin, whose internal cash-out decision the API asks for
 *   (http://API_HOST:8081, the engine's default port on the same host).
 * - API_FREE_BET_GROUP: consumer group of the free-bet returns on wallet-transactions, shared by
 *   every API node (api-free-bets; access/free-bet-returns.ts).
 * - PUBLIC_BASE_URL: origin players reach the pages through, the start of every `game_url` of
 *   POST /games/request-access (http://127.0.0.1:8080, the gateway).
 * - OPS_EDGE_URLS: comma-separated HTTP base URLs of the edges' ops ports (/ready, /metrics) that the
 *   ops console's GET /admin/ops/edges reads (ops/edges.ts). Unset: the local Node edge and WebTransport
 *   edge, derived from EDGE_HOST/EDGE_HTTP_PORT and WT_HOST/WT_HTTP_PORT (their own settings, same
 *   defaults: http://127.0.0.1:8086 and http://127.0.0.1:8088), a wildcard host read as loopback.
 * - OPS_EDGE_TIMEOUT_MS: how long each edge may take to answer one of those reads (2000 ms).
 * Shared: KAFKA_*, TOPIC_*, DATABASE_*, AUTH_*, GAMES_EXTERNAL, LOG_LEVEL, SHUTDOWN_TIMEOUT_MS, CRYPTO_CURRENCIES (lib/config/shared.ts).
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
import {
  authSection,
  dbSection,
  FAILURE_BUDGET_SETTINGS,
  gamesSection,
  kafkaSection,
  moneySection,
  processSection,
} from '../../lib/config/shared.ts';

export const apiSection = section({
  name: 'api',
  // Not `API_`: too common a prefix in other software's settings to call every such variable a typo.
  prefixes: ['RATE_LIMIT_'],
  shape: {
    API_HOST: host.default('127.0.0.1'),
    API_PORT: port.default(8085),
    API_SOCKET: z.string().default(resolve(APP_ROOT, '.data', 'api', 'proxy.sock')),
    API_SOCKET_MODE: z
      .string()
      .regex(/^0?[0-7]{3}$/, 'octal permissions like 600')
      .default('600'),
    API_TRUST_PROXY: csv.default(['none']),
    RATE_LIMIT_MAX: int(1, 10_000_000).default(100),
    // Shared with the edges' failed-credential budget: one definition (lib/config/shared.ts).
    RATE_LIMIT_WINDOW_MS: FAILURE_BUDGET_SETTINGS.RATE_LIMIT_WINDOW_MS,
    RATE_LIMIT_AUTH_FAILURES: FAILURE_BUDGET_SETTINGS.RATE_LIMIT_AUTH_FAILURES,
    RATE_LIMIT_BROWSER_KEYS_PER_IP: int(1, 1_000_000).default(3),
    RATE_LIMIT_BROWSER_KEYS_PER_DOMAIN: int(1, 10_000_000).default(100),
    RATE_LIMIT_BROWSER_KEYS_WINDOW_MS: int(1000, 86_400_000 * 7).default(3_600_000),
    RATE_LIMIT_REDIS_URL: FAILURE_BUDGET_SETTINGS.RATE_LIMIT_REDIS_URL,
    API_ENGINE_URL: originUrl.optional(),
    API_FREE_BET_GROUP: z.string().min(1).default('api-free-bets'),
    PUBLIC_DIR: z.string().min(1).default(resolve(APP_ROOT, 'public')),
  },
  build: (r) => ({
    host: r.API_HOST,
    port: r.API_PORT,
    /** The proxy's Unix socket, or '' for none. */
    socket: r.API_SOCKET === 'none' ? '' : r.API_SOCKET,
    socketMode: Number.parseInt(r.API_SOCKET_MODE, 8),
    /** TCP peers whose X-Forwarded-For is believed too; empty when API_TRUST_PROXY is `none`. */
    trustProxy: r.API_TRUST_PROXY.filter((a) => a !== 'none') as readonly string[],
    rateLimitMax: r.RATE_LIMIT_MAX,
    rateLimitWindowMs: r.RATE_LIMIT_WINDOW_MS,
    authFailuresMax: r.RATE_LIMIT_AUTH_FAILURES,
    browserKeysPerIp: r.RATE_LIMIT_BROWSER_KEYS_PER_IP,
    browserKeysPerDomain: r.RATE_LIMIT_BROWSER_KEYS_PER_DOMAIN,
    browserKeysWindowMs: r.RATE_LIMIT_BROWSER_KEYS_WINDOW_MS,
    /** Shared rate-limit store (`redis://…`), or '' for per-process counters. */
    rateLimitRedisUrl: r.RATE_LIMIT_REDIS_URL,
    publicDir: r.PUBLIC_DIR,
    /** The round engine's origin (internal cash-out decisions), without a trailing slash. */
    engineUrl: (r.API_ENGINE_URL ?? localOrigin(r.API_HOST, 8081)).replace(/\/$/, ''),
    /** Consumer group of the free-bet returns. */
    freeBetGroup: r.API_FREE_BET_GROUP,
  }),
});

/** Game access sessions (docs/contract.md "Operator callbacks"). */
export const accessSection = section({
  name: 'access',
  prefixes: ['PUBLIC_BASE_URL'],
  shape: { PUBLIC_BASE_URL: originUrl.default('http://127.0.0.1:8080') },
  /** Origin of the player pages, without a trailing slash. */
  build: (r) => ({ publicBaseUrl: r.PUBLIC_BASE_URL.replace(/\/$/, '') }),
});

/** A comma-separated list of http(s) origins (the edges' ops ports), at least one. */
const originList = z
  .string()
  .transform((v) => v.split(',').map((p) => p.trim()))
  .pipe(z.array(originUrl).min(1));

/** What the ops console reads beyond the log and Postgres: the edges' ops ports (ops/edges.ts). */
export const opsConsoleSection = section({
  name: 'opsConsole',
  prefixes: ['OPS_'],
  shape: {
    OPS_EDGE_URLS: originList.optional(),
    OPS_EDGE_TIMEOUT_MS: int(100, 60_000).default(2000),
    // The edges' own listener settings, read only to derive the default list (same defaults).
    EDGE_HOST: host.default('127.0.0.1'),
    EDGE_HTTP_PORT: port.default(8086),
    WT_HOST: host.default('127.0.0.1'),
    WT_HTTP_PORT: port.default(8088),
  },
  build: (r) => ({
    /** Base URLs of the edges' ops ports, without a trailing slash. */
    edgeUrls: (
      r.OPS_EDGE_URLS ?? [localOrigin(r.EDGE_HOST, r.EDGE_HTTP_PORT), localOrigin(r.WT_HOST, r.WT_HTTP_PORT)]
    ).map((u) => u.replace(/\/$/, '')) as readonly string[],
    /** Bound of each read of an edge, ms. */
    edgeTimeoutMs: r.OPS_EDGE_TIMEOUT_MS,
  }),
});

/** The API's validated, frozen configuration. @throws ConfigError naming each bad or unknown setting. */
export const loadApiConfig = configLoader([
  kafkaSection,
  dbSection,
  processSection,
  authSection,
  apiSection,
  accessSection,
  moneySection,
  gamesSection,
  opsConsoleSection,
]);
export type ApiConfig = ReturnType<typeof loadApiConfig>;
