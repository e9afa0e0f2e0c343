/**
 * The configuration sections that lib/ and more than one service read (core.ts explains sections).
 * A service's own settings live in `services/<name>/config.ts`.
 *
 * Settings (environment variable → meaning, default):
 * - KAFKA_BROKERS: comma-separated host:port list of a Kafka-compatible broker (127.0.0.1:19092,
 *   the broker scripts/kafka.sh starts).
 * - TOPIC_NAMESPACE: prefix of every topic name, so tests and tenants get their own topics ('').
 * - TOPIC_PARTITIONS: partitions of topics the project creates (3).
 * - TOPIC_REPLICATION_FACTOR: replication factor of created topics (unset: 3 with min.insync.replicas 2
 *   when the cluster has 3 brokers or more at topic creation, else 1; lib/log/topics.ts).
 * - KAFKA_LAG_REFRESH_MS: period of every consumer's admin read of high-water marks for
 *   `kafka_consumer_lag` (lib/log/consumer-lag.ts), which moves the lag of idle or paused partitions (10000 ms).
 * - DATABASE_URL: Postgres connection URL (postgres://casino:casino@127.0.0.1:55432/casino).
 * - DATABASE_SCHEMA: schema holding the read models and checkpoints (public).
 * - DATABASE_POOL_MAX: connections per process (10).
 * - DATABASE_STALL_MS: the API replaces its pool when a query has had no answer for this long, or after a
 *   connection error, so a Postgres restart gives 503s and then answers, never a hang (5000 ms; lib/db/healing-sql.ts).
 * - LOG_LEVEL: pino level (info).
 * - SHUTDOWN_TIMEOUT_MS: longest a graceful stop (SIGTERM/SIGINT) may take, on top of EDGE_DRAIN_MS for the
 *   edges; past it the process logs what it was doing and exits 1 (30000 ms; lib/lifecycle.ts).
 * - API_HOST: the interface the API and the ops listeners of the projector, settlement, wallet saga,
 *   round engine and bots bind (127.0.0.1).
 * - AUTH_REQUIRE_API / AUTH_REQUIRE_WS / AUTH_REQUIRE_SSE / AUTH_REQUIRE_GRPC: whether REST, WebSocket, SSE and
 *   gRPC require a credential (false / false / false / true, docs/contract.md "Authentication" 6); a credential that is
 *   present is checked even when the switch is off. `true`/`false`/`1`/`0`.
 * - AUTH_REQUIRE_WT: the same for WebTransport (`token=`); not in the seed, so off by default like the other
 *   browser streams (false).
 * - AUTH_TOKEN_SECRET: 64 hex, the HMAC key of `tok_` tokens and browser-key secrets; every process that
 *   verifies tokens must share it. Empty: read from (or created once in) AUTH_TOKEN_SECRET_FILE.
 * - AUTH_TOKEN_SECRET_FILE: where a generated token secret is kept (.data/auth/token-secret).
 * - AUTH_ADMIN_KEY: optional first admin key secret (`sk_live_` + 64 hex); empty: the API creates one at
 *   first start when no admin key exists and prints it once to stdout.
 * - AUTH_BATCH_MS: period of the API's batched `last_used_at` writes (5000 ms).
 * - EDGE_HOST: interface the edge's listeners bind (127.0.0.1).
 * - EDGE_HTTP_PORT: the edge's fastify server: SSE, gRPC proxy, /health, /ready, /metrics (8086; 0 = any).
 * - EDGE_WS_PORT: the edge's uWebSockets.js app, /ws/* (8087; 0 = any).
 * - EDGE_WS_THREADS: threads serving WebSocket subscribers on EDGE_WS_PORT, the main one included (1: the
 *   main thread only); each further thread is a WebSocket-only edge of its own (services/edge/ws-threads.ts).
 *   Read by the Node edge only. One per core is the point (2 on a 2-core host).
 * - EDGE_WS_MAX_BUFFER_BYTES: a WebSocket subscriber whose unsent bytes pass this is closed (1 MiB).
 * - EDGE_WS_IDLE_TIMEOUT_S: WebSocket idle timeout; the server pings before it (120 s, min 8 s, uWS rule).
 * - EDGE_SSE_MAX_BUFFER_BYTES: an SSE subscriber whose unsent bytes pass this is closed (1 MiB).
 * - EDGE_SSE_HEARTBEAT_MS: SSE `: heartbeat` comment period (15000 ms, docs/contract.md "Limits").
 * - EDGE_DRAIN_MS: on shutdown, window over which open streams are closed (5000 ms).
 * - EDGE_TRUST_PROXY: comma-separated addresses/CIDRs of peers whose X-Forwarded-For (SSE, WebSocket
 *   upgrade; gRPC metadata `x-forwarded-for`) names the client the failed-credential budget counts
 *   (lib/http/trust.ts); `none` for no proxy. Default loopback (127.0.0.1,::1): the gateway and the
 *   edge's own gRPC proxy on the host, while the edge listens on loopback only (127.0.0.1,::1).
 * - RATE_LIMIT_AUTH_FAILURES / RATE_LIMIT_WINDOW_MS / RATE_LIMIT_REDIS_URL: the failed-credential budget
 *   the API and both edges share (lib/auth/failure-budget.ts; the API's settings, same names and rules):
 *   401 answers per client IP per window (20 per 60000 ms); past it, that IP's attempts carrying a
 *   credential are refused (429, gRPC RESOURCE_EXHAUSTED). Counted in the Redis of RATE_LIMIT_REDIS_URL,
 *   shared by every API and edge process, or else per process ('').
 * - GAMES_EXTERNAL: comma-separated slugs of the games whose rounds an external game server publishes
 *   (POST /api/rounds/open and POST /api/rounds); the round engine runs every other game and refuses to
 *   start with one of these in ROUND_GAMES, so each game has exactly one writer (docs/threat-model.md)
 *   (none).
 * - GAMES_EXTERNAL_SKEW_MS: largest distance between the `finished_at` an external game server posts and
 *   the platform's clock (5000 ms).
 * - CRYPTO_CURRENCIES: the crypto currencies accepted beside ISO 4217's and the precision of each (digits
 *   after the point of its minor unit), `CODE:PRECISION` comma-separated; `none` for no crypto
 *   (BTC:8,ETH:8,LTC:8,USDT:6,USDC:6; rules/money/currencies.ts). Every process that parses, stores or
 *   formats amounts (api, wallet saga, projector, operator sandbox) must see the same value.
 */

import { z } from 'zod';
import { GAME_SLUGS, type GameSlug } from '../../rules/games/catalog.ts';
import { cryptoProblems, DEFAULT_CRYPTO } from '../../rules/money/currencies.ts';
import type { ConfigOf } from './core.ts';
import { bool, csv, dataPath, host, int, port, section, sqlIdentifier } from './core.ts';

export const kafkaSection = section({
  name: 'kafka',
  prefixes: ['KAFKA_', 'TOPIC_'],
  shape: {
    KAFKA_BROKERS: z
      .string()
      .transform((s) => s.split(',').map((p) => p.trim()))
      .pipe(z.array(z.string().regex(/^[^\s:]+:\d{1,5}$/, 'expected host:port')).min(1))
      .default(['127.0.0.1:19092']),
    TOPIC_NAMESPACE: z
      .string()
      .regex(/^[a-zA-Z0-9._-]*$/, 'letters, digits, . _ - only')
      .default(''),
    TOPIC_PARTITIONS: int(1, 1024).default(3),
    TOPIC_REPLICATION_FACTOR: int(1, 16).optional(),
    KAFKA_LAG_REFRESH_MS: int(100, 3_600_000).default(10_000),
    // The local broker's own settings, read by scripts/kafka.sh (ports, heap, start and stop
    // bounds). Declared so that a service started with them in its environment (a moved local
    // broker: `KAFKA_PORT=29092 npm start`) accepts them; services use KAFKA_BROKERS only.
    KAFKA_PORT: int(1, 65_535).optional(),
    KAFKA_CONTROLLER_PORT: int(1, 65_535).optional(),
    KAFKA_HEAP_OPTS: z.string().optional(),
    KAFKA_READY_TIMEOUT_MS: int(1, 3_600_000).optional(),
    KAFKA_STOP_TIMEOUT_S: int(1, 3_600).optional(),
    KAFKA_CLUSTER_SIZE: int(1, 9).optional(),
    KAFKA_FAILOVER: z.enum(['tuned', 'kafka-defaults']).optional(),
    KAFKA_NODE: int(1, 9).optional(),
  },
  build: (r) => ({
    brokers: r.KAFKA_BROKERS as readonly string[],
    topicNamespace: r.TOPIC_NAMESPACE,
    partitions: r.TOPIC_PARTITIONS,
    /** Replication of created topics; undefined: decided from the cluster's broker count. */
    replicationFactor: r.TOPIC_REPLICATION_FACTOR as number | undefined,
    /** Period of the admin read behind `kafka_consumer_lag`, ms. */
    lagRefreshMs: r.KAFKA_LAG_REFRESH_MS,
  }),
});

export const dbSection = section({
  name: 'db',
  prefixes: ['DATABASE_'],
  shape: {
    DATABASE_URL: z.string().url().default('postgres://casino:casino@127.0.0.1:55432/casino'),
    DATABASE_SCHEMA: sqlIdentifier.default('public'),
    DATABASE_POOL_MAX: int(1, 200).default(10),
    DATABASE_STALL_MS: int(100, 600_000).default(5_000),
  },
  build: (r) => ({
    url: r.DATABASE_URL,
    schema: r.DATABASE_SCHEMA,
    poolMax: r.DATABASE_POOL_MAX,
    /** A query with no answer for this long (ms) makes the API replace its pool (lib/db/healing-sql.ts). */
    stallMs: r.DATABASE_STALL_MS,
  }),
});

export const processSection = section({
  name: 'process',
  prefixes: [],
  shape: {
    LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
    SHUTDOWN_TIMEOUT_MS: int(1000, 600_000).default(30_000),
  },
  build: (r) => ({
    logLevel: r.LOG_LEVEL,
    /** Bound of a graceful stop, ms (edges: after their drain window). */
    shutdownTimeoutMs: r.SHUTDOWN_TIMEOUT_MS,
  }),
});

/** Where ops listeners (/health, /ready, /metrics) of services without an HTTP API of their own bind. */
export const opsSection = section({
  name: 'ops',
  prefixes: [],
  shape: { API_HOST: host.default('127.0.0.1') },
  build: (r) => ({ host: r.API_HOST }),
});

export const authSection = section({
  name: 'auth',
  prefixes: ['AUTH_'],
  shape: {
    AUTH_REQUIRE_API: bool.default(false),
    AUTH_REQUIRE_WS: bool.default(false),
    AUTH_REQUIRE_SSE: bool.default(false),
    AUTH_REQUIRE_GRPC: bool.default(true),
    AUTH_REQUIRE_WT: bool.default(false),
    AUTH_TOKEN_SECRET: z
      .string()
      .regex(/^([0-9a-f]{64})?$/, '64 lower-case hex characters')
      .default(''),
    AUTH_TOKEN_SECRET_FILE: dataPath('auth', 'token-secret'),
    AUTH_ADMIN_KEY: z
      .string()
      .regex(/^(sk_live_[0-9a-f]{64})?$/, 'sk_live_ followed by 64 lower-case hex characters')
      .default(''),
    AUTH_BATCH_MS: int(100, 600_000).default(5_000),
  },
  build: (r) => ({
    requireApi: r.AUTH_REQUIRE_API,
    requireWs: r.AUTH_REQUIRE_WS,
    requireSse: r.AUTH_REQUIRE_SSE,
    requireGrpc: r.AUTH_REQUIRE_GRPC,
    /** WebTransport (`token=`); not in the seed, off by default like WebSocket and SSE. */
    requireWt: r.AUTH_REQUIRE_WT,
    /** 64 hex, or '' when the secret comes from `tokenSecretFile`. */
    tokenSecret: r.AUTH_TOKEN_SECRET,
    tokenSecretFile: r.AUTH_TOKEN_SECRET_FILE,
    /** `sk_live_…` secret of the first admin key, or ''. */
    adminKey: r.AUTH_ADMIN_KEY,
    batchMs: r.AUTH_BATCH_MS,
  }),
});

/** The settings both edges (services/edge, services/edge-webtransport) share through lib/stream. */
export const edgeSection = section({
  name: 'edge',
  prefixes: ['EDGE_'],
  shape: {
    EDGE_HOST: host.default('127.0.0.1'),
    EDGE_HTTP_PORT: port.default(8086),
    EDGE_WS_PORT: port.default(8087),
    EDGE_WS_THREADS: int(1, 64).default(1),
    EDGE_WS_MAX_BUFFER_BYTES: int(1024, 1 << 30).default(1 << 20),
    EDGE_WS_IDLE_TIMEOUT_S: int(8, 960).default(120),
    EDGE_SSE_MAX_BUFFER_BYTES: int(1024, 1 << 30).default(1 << 20),
    EDGE_SSE_HEARTBEAT_MS: int(50, 3_600_000).default(15_000),
    EDGE_DRAIN_MS: int(0, 600_000).default(5_000),
    EDGE_TRUST_PROXY: csv.default(['127.0.0.1', '::1']),
  },
  build: (r) => ({
    host: r.EDGE_HOST,
    httpPort: r.EDGE_HTTP_PORT,
    wsPort: r.EDGE_WS_PORT,
    wsThreads: r.EDGE_WS_THREADS,
    wsMaxBufferBytes: r.EDGE_WS_MAX_BUFFER_BYTES,
    wsIdleTimeoutS: r.EDGE_WS_IDLE_TIMEOUT_S,
    sseMaxBufferBytes: r.EDGE_SSE_MAX_BUFFER_BYTES,
    sseHeartbeatMs: r.EDGE_SSE_HEARTBEAT_MS,
    drainMs: r.EDGE_DRAIN_MS,
    /** Peers whose X-Forwarded-For names the client; empty when EDGE_TRUST_PROXY is `none`. */
    trustProxy: r.EDGE_TRUST_PROXY.filter((a) => a !== 'none') as readonly string[],
  }),
});

/**
 * The settings of the failed-credential budget, one definition for the API (services/api/config.ts,
 * whose request limit reads RATE_LIMIT_WINDOW_MS and RATE_LIMIT_REDIS_URL too) and the edges.
 */
export const FAILURE_BUDGET_SETTINGS = {
  RATE_LIMIT_WINDOW_MS: int(1000, 86_400_000).default(60_000),
  RATE_LIMIT_AUTH_FAILURES: int(1, 1_000_000).default(20),
  RATE_LIMIT_REDIS_URL: z
    .string()
    .regex(
      /^rediss?:\/\/([^\s@/]*@)?(\[[0-9a-fA-F:.]+\]|[^\s@/:[\]]+):\d{1,5}(\/\d{1,2})?$/,
      'redis://[user:password@]host:port[/db]',
    )
    .default(''),
} as const;

/**
 * The failed-credential budget as the edges read it (lib/auth/failure-budget.ts). No owned prefix:
 * the API's other RATE_LIMIT_ settings may be in an edge's environment too.
 */
export const failureBudgetSection = section({
  name: 'failureBudget',
  prefixes: [],
  shape: FAILURE_BUDGET_SETTINGS,
  build: (r) => ({
    /** 401 answers one client IP may get per window. */
    max: r.RATE_LIMIT_AUTH_FAILURES,
    windowMs: r.RATE_LIMIT_WINDOW_MS,
    /** Shared store (`redis://…`), or '' for per-process counters. */
    redisUrl: r.RATE_LIMIT_REDIS_URL,
  }),
});

/** `BTC:8,ETH:8` → {BTC: 8, ETH: 8}; `none` → {}. Codes and precisions are checked by cryptoProblems. */
const cryptoList = z
  .string()
  .regex(/^(none|[^:,\s]+:\d{1,2}(,[^:,\s]+:\d{1,2})*)$/, 'CODE:PRECISION pairs, comma-separated, or none')
  .transform((s) => (s === 'none' ? [] : s.split(',').map((p) => p.split(':') as [string, string])))
  .refine((pairs) => new Set(pairs.map(([c]) => c)).size === pairs.length, 'a code named twice')
  .transform((pairs) => Object.fromEntries(pairs.map(([c, p]) => [c, Number(p)])) as Record<string, number>)
  .superRefine((crypto, ctx) => {
    for (const message of cryptoProblems(crypto)) ctx.addIssue({ code: 'custom', message });
  });

/** The crypto currencies and precisions every money-handling service builds its currency table from. */
export const moneySection = section({
  name: 'money',
  prefixes: ['CRYPTO_'],
  shape: { CRYPTO_CURRENCIES: cryptoList.default({ ...DEFAULT_CRYPTO }) },
  build: (r) => ({
    /** Crypto code → precision; `currencyTable(crypto)` (rules/money/currencies.ts) adds ISO 4217. */
    crypto: r.CRYPTO_CURRENCIES as Readonly<Record<string, number>>,
  }),
});

/** GAMES_EXTERNAL: a comma-separated list of distinct game slugs, or empty for none. */
export const externalGamesSetting = z
  .string()
  .transform((s) => s.split(',').map((p) => p.trim()))
  .pipe(z.array(z.enum(GAME_SLUGS)).refine((a) => new Set(a).size === a.length, 'each game at most once'))
  .default([]);

/** Which games an external game server publishes (rules/games/catalog.ts gameSource). */
export const gamesSection = section({
  name: 'games',
  prefixes: ['GAMES_'],
  shape: { GAMES_EXTERNAL: externalGamesSetting, GAMES_EXTERNAL_SKEW_MS: int(100, 600_000).default(5000) },
  build: (r) => ({
    external: r.GAMES_EXTERNAL as readonly GameSlug[],
    /** Largest distance, ms, between a posted finished_at and the platform's clock. */
    skewMs: r.GAMES_EXTERNAL_SKEW_MS,
  }),
});

const SHARED = [
  kafkaSection,
  dbSection,
  processSection,
  opsSection,
  authSection,
  edgeSection,
  moneySection,
  gamesSection,
] as const;

/**
 * The shared sections as one type: lib/ takes the parts it needs (`Pick<SharedConfig, 'kafka'>`).
 */
export type SharedConfig = ConfigOf<typeof SHARED>;
