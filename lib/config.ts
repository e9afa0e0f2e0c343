/**
 * The one typed configuration of every service (STYLE.md §5). It is read from the environment
 * once, validated with zod, frozen, and passed down explicitly; no other module reads
 * `process.env`. An unknown or malformed setting stops the process with a message naming it.
 *
 * Settings (environment variable → meaning, default):
 * - KAFKA_BROKERS: comma-separated host:port list of a Kafka-compatible broker (127.0.0.1:19092,
 *   the broker scripts/kafka.sh starts).
 * - TOPIC_NAMESPACE: prefix of every topic name, so tests and tenants get their own topics ('').
 * - TOPIC_PARTITIONS: partitions of topics the project creates (3).
 * - TOPIC_REPLICATION_FACTOR: replication factor of created topics (1).
 * - KAFKA_LAG_REFRESH_MS: period of every consumer's admin read of high-water marks for
 *   `kafka_consumer_lag` (lib/log/consumer-lag.ts), which moves the lag of idle or paused partitions (10000 ms).
 * - DATABASE_URL: Postgres connection URL (postgres://casino:casino@127.0.0.1:55432/casino).
 * - DATABASE_SCHEMA: schema holding the read models and checkpoints (public).
 * - DATABASE_POOL_MAX: connections per process (10).
 * - DATABASE_STALL_MS: the API replaces its pool when a query has had no answer for this long, or after a
 *   connection error, so a Postgres restart gives 503s and then answers, never a hang (5000 ms; lib/db/healing-sql.ts).
 * - API_HOST / API_PORT: REST listener (127.0.0.1 / 8085); the pages reach it through the gateway on 8080.
 * - API_TRUST_PROXY: comma-separated addresses/CIDRs of reverse proxies whose X-Forwarded-For the API
 *   believes, so the per-IP limit counts the browser, not the gateway (127.0.0.1,::1; `none` = no proxy).
 * - RATE_LIMIT_MAX / RATE_LIMIT_WINDOW_MS: anonymous REST limit per IP (100 per 60000 ms, seed 000 "Limits").
 * - RATE_LIMIT_REDIS_URL: `redis://[user:password@]host:port[/db]` (or `rediss://`) of a Redis shared by every
 *   API node, so a key or IP has one budget across nodes; keys `<TOPIC_NAMESPACE>rate-limit:…`. Redis down: requests
 *   pass unlimited (fail open, logged, metric). Empty: counters per process, N nodes allow N × the limit ('').
 * - PUBLIC_DIR: static demo pages (public/ of the repository).
 * - ROUND_SPEED: round cadence factor, 2 = twice as fast (1).
 * - ROUND_GAMES: comma-separated slugs the round engine runs (all four).
 * - ROUND_SERVER_SEED: 64 hex chars, the secret from which every hash chain derives; when empty
 *   the engine creates one in ROUND_SEED_FILE at first start.
 * - ROUND_SEED_FILE: where a generated server seed is kept (.data/round-engine/server-seed).
 * - ROUND_CHAIN_LENGTH: rounds per hash chain before a new epoch starts (100000).
 * - ROUND_ENGINE_PORT: the engine's health/fairness HTTP port (8081; 0 = any free port).
 * - PROJECTOR_PORT: the projector's health HTTP port (8082; 0 = any free port).
 * - PROJECTOR_GROUP: consumer group of the rounds projector (projector-rounds).
 * - LOG_LEVEL: pino level (info).
 * - EDGE_HOST: interface the edge's listeners bind (127.0.0.1).
 * - EDGE_HTTP_PORT: the edge's fastify server: SSE, gRPC proxy, /health, /ready, /metrics (8086; 0 = any).
 * - EDGE_WS_PORT: the edge's uWebSockets.js app, /ws/* (8087; 0 = any).
 * - EDGE_WS_MAX_BUFFER_BYTES: a WebSocket subscriber whose unsent bytes pass this is closed (1 MiB).
 * - EDGE_WS_IDLE_TIMEOUT_S: WebSocket idle timeout; the server pings before it (120 s, min 8 s, uWS rule).
 * - EDGE_SSE_MAX_BUFFER_BYTES: an SSE subscriber whose unsent bytes pass this is closed (1 MiB).
 * - EDGE_SSE_HEARTBEAT_MS: SSE `: heartbeat` comment period (15000 ms, seed 000 "Limits").
 * - EDGE_DRAIN_MS: on shutdown, window over which open streams are closed (5000 ms).
 * - SHUTDOWN_TIMEOUT_MS: longest a graceful stop (SIGTERM/SIGINT) may take, on top of EDGE_DRAIN_MS for the
 *   edges; past it the process logs what it was doing and exits 1 (30000 ms; lib/lifecycle.ts).
 * - GRPC_HOST / GRPC_PORT: the edge's gRPC listener, service datastream.DataStream (127.0.0.1 / 50051,
 *   seed 000 "{grpc_host}:50051"; 0 = any free port).
 * - GRPC_MAX_BUFFER_BYTES: a gRPC stream whose unsent bytes pass this is ended with
 *   RESOURCE_EXHAUSTED (1 MiB).
 * - WT_HOST: interface of the WebTransport edge's QUIC (UDP) listener and its plain HTTP server (127.0.0.1).
 * - WT_PORT: WebTransport over HTTP/3, `https://{host}:4433/wt` of seed 000 (4433; 0 = any free port).
 * - WT_HTTP_PORT: the WebTransport edge's HTTP server: /health, /ready, /cert-hash, /metrics (8088; 0 = any).
 * - WT_CERT_FILE / WT_KEY_FILE: PEM certificate chain and private key of the QUIC listener (production);
 *   both or neither. Unset: the development certificate in WT_DEV_CERT_DIR (scripts/dev-cert.sh).
 * - WT_DEV_CERT_DIR: where scripts/dev-cert.sh keeps cert.pem and key.pem (.data/webtransport).
 * - WT_MAX_SESSIONS: open WebTransport sessions per edge process; beyond it a session is refused with 503 (10000).
 * - WT_HANDSHAKE_TIMEOUT_MS: a QUIC connection that has not sent its CONNECT request by then is closed (10000 ms).
 * - GATEWAY_HOST / GATEWAY_PORT: the one-origin reverse proxy of `npm start` (127.0.0.1 / 8080).
 * - GATEWAY_OPS_PORT: the gateway's own /health, /ready, /metrics on GATEWAY_HOST, apart from the
 *   proxied paths, where /metrics and /ready are the API's (8089; 0 = any free port).
 * - GATEWAY_API_URL, GATEWAY_EDGE_HTTP_URL, GATEWAY_EDGE_WS_URL, GATEWAY_WT_HTTP_URL: the gateway's
 *   upstreams (http://…). Unset: derived from API_HOST/API_PORT, EDGE_HOST/EDGE_HTTP_PORT,
 *   EDGE_HOST/EDGE_WS_PORT and WT_HOST/WT_HTTP_PORT, a wildcard host (0.0.0.0, ::) read as 127.0.0.1.
 * - AUTH_REQUIRE_API / AUTH_REQUIRE_WS / AUTH_REQUIRE_SSE / AUTH_REQUIRE_GRPC: whether REST, WebSocket, SSE and
 *   gRPC require a credential (false / false / false / true, seed 000 "Authentication" 6); a credential that is
 *   present is checked even when the switch is off. `true`/`false`/`1`/`0`.
 * - AUTH_REQUIRE_WT: the same for WebTransport (`token=`); not in the seed, so off by default like the other
 *   browser streams (false).
 * - AUTH_TOKEN_SECRET: 64 hex, the HMAC key of `tok_` tokens and browser-key secrets; every process that
 *   verifies tokens must share it. Empty: read from (or created once in) AUTH_TOKEN_SECRET_FILE.
 * - AUTH_TOKEN_SECRET_FILE: where a generated token secret is kept (.data/auth/token-secret).
 * - AUTH_ADMIN_KEY: optional first admin key secret (`sk_live_` + 64 hex); empty: the API creates one at
 *   first start when no admin key exists and prints it once to stdout.
 * - AUTH_BATCH_MS: period of the API's batched `last_used_at` writes (5000 ms).
 * - PUBLIC_BASE_URL: origin players reach the pages through, the start of every `game_url` of
 *   POST /games/request-access (http://127.0.0.1:8080, the gateway).
 * - WALLET_SAGA_HTTP_PORT: the wallet saga's /health, /ready, /metrics listener on API_HOST (8091; 0 = any).
 * - WALLET_SAGA_GROUP: consumer group of the wallet saga on wallet-transactions (wallet-saga).
 * - WALLET_SAGA_MAX_IN_FLIGHT: events admitted and not yet finished before the saga pauses its
 *   consumer (backpressure) (256).
 * - WALLET_SAGA_CACHE_MS: how long an operator's configuration row is cached (5000 ms).
 * - WALLET_REPLAY_GROUP: consumer group whose offset on the wallet dead-letter topic a replay
 *   (`npm run dead-letters -- replay wallet`, `npm run wallet:replay`) moves over the prefix of replayed
 *   records; the replay ledger topic holds each replay (wallet-replay).
 * - SETTLEMENT_HTTP_PORT: the settlement processor's /health, /ready, /metrics listener on API_HOST (8092; 0 = any).
 * - SETTLEMENT_GROUP: consumer group of the settlement processor on wallet-transactions and rounds (settlement).
 * - BOTS_PLAYERS: simulated players run by services/bots (0 = none; `npm start` runs 6).
 * - BOTS_API_URL: where the bots reach the API (http://API_HOST:API_PORT).
 * - BOTS_OPERATOR_FILE: the default operator's credentials written by scripts/register-sandbox.ts
 *   (.data/sandbox/operator.json).
 * - BOTS_BET_INTERVAL_MS: mean pause between one bot's bets (4000 ms; each pause is 0.5x to 1.5x).
 * - BOTS_HTTP_PORT: the bots' /health, /ready, /metrics listener on API_HOST (8093; 0 = any free port).
 * - SANDBOX_HOST / SANDBOX_PORT: the reference operator wallet, services/operator-sandbox (127.0.0.1 / 8090;
 *   0 = any free port). Its /_sandbox/* admin routes are unauthenticated: keep it on loopback.
 * - SANDBOX_SIGNING_SECRET: the Standard Webhooks secret (`whsec_` + base64) callbacks must be signed with.
 *   Empty: derived from 32 random bytes created once in SANDBOX_SECRET_FILE (never a fixed dev secret).
 * - SANDBOX_SECRET_FILE: where a generated sandbox signing key is kept (.data/sandbox/signing-secret).
 * - SANDBOX_DB_SCHEMA: Postgres schema of the sandbox's own ledger (sandbox).
 * - SANDBOX_INITIAL_BALANCE: balance of an account at first sight, major units with at most two
 *   decimals (1000.00).
 */
import { resolve } from 'node:path';
import { z } from 'zod';
import { GAME_SLUGS } from '../rules/games/catalog.ts';
import { ConfigError } from './errors.ts';

/** This file's directory. Deno, which also loads lib/ (services/edge-webtransport), types it `string | undefined`. */
const HERE = import.meta.dirname as string;
const int = (min: number, max: number) => z.coerce.number().int().min(min).max(max);
const csv = z
  .string()
  .transform((s) => s.split(',').map((p) => p.trim()))
  .pipe(z.array(z.string().min(1)).min(1));

/** An http(s) origin the gateway forwards to; a path or query would be silently dropped, so none is allowed. */
const upstreamUrl = z
  .string()
  .regex(/^https?:\/\/[^/?#\s]+\/?$/, 'an http(s)://host:port origin without path');

const bool = z.enum(['true', 'false', '1', '0']).transform((v) => v === 'true' || v === '1');

/** A Postgres schema name (DATABASE_SCHEMA, SANDBOX_DB_SCHEMA), spliced into DDL and search_path. */
const sqlIdentifier = z.string().regex(/^[a-z_][a-z0-9_]{0,62}$/, 'a lower-case SQL identifier');

const schema = z.object({
  KAFKA_BROKERS: csv
    .pipe(z.array(z.string().regex(/^[^\s:]+:\d{1,5}$/, 'expected host:port')))
    .default(['127.0.0.1:19092']),
  TOPIC_NAMESPACE: z
    .string()
    .regex(/^[a-zA-Z0-9._-]*$/, 'letters, digits, . _ - only')
    .default(''),
  TOPIC_PARTITIONS: int(1, 1024).default(3),
  TOPIC_REPLICATION_FACTOR: int(1, 16).default(1),
  KAFKA_LAG_REFRESH_MS: int(100, 3_600_000).default(10_000),
  DATABASE_URL: z.string().url().default('postgres://casino:casino@127.0.0.1:55432/casino'),
  DATABASE_SCHEMA: sqlIdentifier.default('public'),
  DATABASE_POOL_MAX: int(1, 200).default(10),
  DATABASE_STALL_MS: int(100, 600_000).default(5_000),
  API_HOST: z.string().min(1).default('127.0.0.1'),
  API_PORT: int(0, 65535).default(8085),
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
  PUBLIC_DIR: z
    .string()
    .min(1)
    .default(resolve(HERE, '..', 'public')),
  ROUND_SPEED: z.coerce.number().positive().max(1000).default(1),
  ROUND_GAMES: csv.pipe(z.array(z.enum(GAME_SLUGS))).default([...GAME_SLUGS]),
  ROUND_SERVER_SEED: z
    .string()
    .regex(/^([0-9a-f]{64})?$/, '64 lower-case hex characters')
    .default(''),
  ROUND_SEED_FILE: z
    .string()
    .min(1)
    .default(resolve(HERE, '..', '.data', 'round-engine', 'server-seed')),
  ROUND_CHAIN_LENGTH: int(10, 10_000_000).default(100_000),
  ROUND_ENGINE_PORT: int(0, 65535).default(8081),
  PROJECTOR_PORT: int(0, 65535).default(8082),
  PROJECTOR_GROUP: z.string().min(1).default('projector-rounds'),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  BOTS_PLAYERS: int(0, 1000).default(0),
  BOTS_API_URL: upstreamUrl.optional(),
  BOTS_OPERATOR_FILE: z
    .string()
    .min(1)
    .default(resolve(HERE, '..', '.data', 'sandbox', 'operator.json')),
  BOTS_BET_INTERVAL_MS: int(100, 600_000).default(4_000),
  BOTS_HTTP_PORT: int(0, 65535).default(8093),
  SANDBOX_HOST: z.string().min(1).default('127.0.0.1'),
  SANDBOX_PORT: int(0, 65535).default(8090),
  SANDBOX_SIGNING_SECRET: z
    .string()
    .regex(/^(whsec_[A-Za-z0-9+/]+={0,2})?$/, 'whsec_ followed by base64')
    .default(''),
  SANDBOX_SECRET_FILE: z
    .string()
    .min(1)
    .default(resolve(HERE, '..', '.data', 'sandbox', 'signing-secret')),
  SANDBOX_DB_SCHEMA: sqlIdentifier.default('sandbox'),
  SANDBOX_INITIAL_BALANCE: z
    .string()
    .regex(/^\d{1,13}(\.\d{1,2})?$/, 'a non-negative decimal with at most two decimals')
    .default('1000.00'),
  EDGE_HOST: z.string().min(1).default('127.0.0.1'),
  EDGE_HTTP_PORT: int(0, 65535).default(8086),
  EDGE_WS_PORT: int(0, 65535).default(8087),
  EDGE_WS_MAX_BUFFER_BYTES: int(1024, 1 << 30).default(1 << 20),
  EDGE_WS_IDLE_TIMEOUT_S: int(8, 960).default(120),
  EDGE_SSE_MAX_BUFFER_BYTES: int(1024, 1 << 30).default(1 << 20),
  EDGE_SSE_HEARTBEAT_MS: int(50, 3_600_000).default(15_000),
  EDGE_DRAIN_MS: int(0, 600_000).default(5_000),
  SHUTDOWN_TIMEOUT_MS: int(1000, 600_000).default(30_000),
  GRPC_HOST: z.string().min(1).default('127.0.0.1'),
  GRPC_PORT: int(0, 65535).default(50051),
  GRPC_MAX_BUFFER_BYTES: int(1024, 1 << 30).default(1 << 20),
  WT_HOST: z.string().min(1).default('127.0.0.1'),
  WT_PORT: int(0, 65535).default(4433),
  WT_HTTP_PORT: int(0, 65535).default(8088),
  WT_CERT_FILE: z.string().min(1).optional(),
  WT_KEY_FILE: z.string().min(1).optional(),
  WT_DEV_CERT_DIR: z
    .string()
    .min(1)
    .default(resolve(HERE, '..', '.data', 'webtransport')),
  WT_MAX_SESSIONS: int(1, 1_000_000).default(10_000),
  WT_HANDSHAKE_TIMEOUT_MS: int(100, 600_000).default(10_000),
  GATEWAY_HOST: z.string().min(1).default('127.0.0.1'),
  GATEWAY_PORT: int(0, 65535).default(8080),
  GATEWAY_OPS_PORT: int(0, 65535).default(8089),
  GATEWAY_API_URL: upstreamUrl.optional(),
  GATEWAY_EDGE_HTTP_URL: upstreamUrl.optional(),
  GATEWAY_EDGE_WS_URL: upstreamUrl.optional(),
  GATEWAY_WT_HTTP_URL: upstreamUrl.optional(),
  AUTH_REQUIRE_API: bool.default(false),
  AUTH_REQUIRE_WS: bool.default(false),
  AUTH_REQUIRE_SSE: bool.default(false),
  AUTH_REQUIRE_GRPC: bool.default(true),
  AUTH_REQUIRE_WT: bool.default(false),
  AUTH_TOKEN_SECRET: z
    .string()
    .regex(/^([0-9a-f]{64})?$/, '64 lower-case hex characters')
    .default(''),
  AUTH_TOKEN_SECRET_FILE: z
    .string()
    .min(1)
    .default(resolve(HERE, '..', '.data', 'auth', 'token-secret')),
  AUTH_ADMIN_KEY: z
    .string()
    .regex(/^(sk_live_[0-9a-f]{64})?$/, 'sk_live_ followed by 64 lower-case hex characters')
    .default(''),
  AUTH_BATCH_MS: int(100, 600_000).default(5_000),
  PUBLIC_BASE_URL: upstreamUrl.default('http://127.0.0.1:8080'),
  WALLET_SAGA_HTTP_PORT: int(0, 65535).default(8091),
  WALLET_SAGA_GROUP: z.string().min(1).default('wallet-saga'),
  WALLET_SAGA_MAX_IN_FLIGHT: int(1, 100_000).default(256),
  WALLET_SAGA_CACHE_MS: int(0, 3_600_000).default(5_000),
  WALLET_REPLAY_GROUP: z.string().min(1).default('wallet-replay'),
  SETTLEMENT_HTTP_PORT: int(0, 65535).default(8092),
  SETTLEMENT_GROUP: z.string().min(1).default('settlement'),
});

type Raw = z.infer<typeof schema>;

/** The validated configuration; deeply read-only. */
export interface Config {
  /** Simulated players (services/bots). */
  readonly bots: {
    readonly players: number;
    /** API origin without a trailing slash. */
    readonly apiUrl: string;
    /** JSON file {operator_id, api_token} of the operator the bots play through. */
    readonly operatorFile: string;
    /** Mean pause between one bot's bets, ms. */
    readonly betIntervalMs: number;
    /** /health, /ready, /metrics listener (on API_HOST). */
    readonly httpPort: number;
  };
  /** The reference operator wallet (services/operator-sandbox). */
  readonly sandbox: {
    readonly host: string;
    readonly port: number;
    /** `whsec_…`, or '' when the key comes from `secretFile`. */
    readonly signingSecret: string;
    readonly secretFile: string;
    readonly dbSchema: string;
    /** Balance of a new account, minor units. */
    readonly initialBalanceMinor: number;
  };
  readonly kafka: {
    readonly brokers: readonly string[];
    readonly topicNamespace: string;
    readonly partitions: number;
    readonly replicationFactor: number;
    /** Period of the admin read behind `kafka_consumer_lag`, ms. */
    readonly lagRefreshMs: number;
  };
  readonly db: {
    readonly url: string;
    readonly schema: string;
    readonly poolMax: number;
    /** A query with no answer for this long (ms) makes the API replace its pool (lib/db/healing-sql.ts). */
    readonly stallMs: number;
  };
  readonly api: {
    readonly host: string;
    readonly port: number;
    /** Trusted reverse-proxy addresses; empty when API_TRUST_PROXY is `none`. */
    readonly trustProxy: readonly string[];
    readonly rateLimitMax: number;
    readonly rateLimitWindowMs: number;
    /** Shared rate-limit store (`redis://…`), or '' for per-process counters. */
    readonly rateLimitRedisUrl: string;
    readonly publicDir: string;
  };
  readonly engine: {
    readonly speed: number;
    readonly games: readonly (typeof GAME_SLUGS)[number][];
    readonly serverSeed: string;
    readonly seedFile: string;
    readonly chainLength: number;
    readonly port: number;
  };
  readonly projector: { readonly group: string; readonly port: number };
  readonly edge: {
    readonly host: string;
    readonly httpPort: number;
    readonly wsPort: number;
    readonly wsMaxBufferBytes: number;
    readonly wsIdleTimeoutS: number;
    readonly sseMaxBufferBytes: number;
    readonly sseHeartbeatMs: number;
    readonly drainMs: number;
  };
  readonly grpc: { readonly host: string; readonly port: number; readonly maxBufferBytes: number };
  readonly wt: {
    readonly host: string;
    readonly port: number;
    readonly httpPort: number;
    /** Configured certificate and key files, or null for the development certificate in `devCertDir`. */
    readonly certFile: string | null;
    readonly keyFile: string | null;
    readonly devCertDir: string;
    readonly maxSessions: number;
    readonly handshakeTimeoutMs: number;
  };
  readonly gateway: {
    readonly host: string;
    readonly port: number;
    /** The gateway's own /health, /ready, /metrics listener. */
    readonly opsPort: number;
    /** Upstream origins, without a trailing slash. */
    readonly upstreams: {
      readonly api: string;
      readonly edgeHttp: string;
      readonly edgeWs: string;
      readonly wtHttp: string;
    };
  };
  readonly auth: {
    readonly requireApi: boolean;
    readonly requireWs: boolean;
    readonly requireSse: boolean;
    readonly requireGrpc: boolean;
    /** WebTransport (`token=`); not in the seed, off by default like WebSocket and SSE. */
    readonly requireWt: boolean;
    /** 64 hex, or '' when the secret comes from `tokenSecretFile`. */
    readonly tokenSecret: string;
    readonly tokenSecretFile: string;
    /** `sk_live_…` secret of the first admin key, or ''. */
    readonly adminKey: string;
    readonly batchMs: number;
  };
  /** services/wallet-saga and scripts/wallet-replay.ts (issue 5). */
  readonly walletSaga: {
    readonly httpPort: number;
    readonly group: string;
    readonly maxInFlight: number;
    /** Operator configuration cache lifetime, ms. */
    readonly cacheMs: number;
    readonly replayGroup: string;
  };
  /** The settlement processor (services/settlement). */
  readonly settlement: { readonly httpPort: number; readonly group: string };
  /** Game access sessions (issue 5). */
  readonly access: {
    /** Origin of the player pages, without a trailing slash. */
    readonly publicBaseUrl: string;
  };
  readonly logLevel: Raw['LOG_LEVEL'];
  /** Bound of a graceful stop, ms (edges: after their drain window). */
  readonly shutdownTimeoutMs: number;
}

/** `http://host:port` of a local listener; a wildcard bind address is reached over loopback. */
function localOrigin(host: string, port: number): string {
  const h = host === '0.0.0.0' || host === '::' ? '127.0.0.1' : host;
  return `http://${h.includes(':') ? `[${h}]` : h}:${port}`;
}

function deepFreeze<T>(o: T): T {
  if (o && typeof o === 'object') {
    for (const v of Object.values(o)) deepFreeze(v);
    Object.freeze(o);
  }
  return o;
}

/**
 * Validates the settings in `env` (only the keys listed above are read) and returns the frozen config.
 * Empty strings count as unset. `overrides` win over `env`; tests use them.
 * @throws ConfigError naming every malformed setting.
 */
export function loadConfig(
  env: Record<string, string | undefined> = process.env,
  overrides: Record<string, string | number | undefined> = {},
): Config {
  const input: Record<string, string | number> = {};
  for (const key of Object.keys(schema.shape)) {
    const v = overrides[key] ?? env[key];
    if (v !== undefined && v !== '') input[key] = v;
  }
  const parsed = schema.safeParse(input);
  if (!parsed.success) {
    const lines = parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`);
    throw new ConfigError(`invalid configuration:\n  ${lines.join('\n  ')}`);
  }
  const r = parsed.data;
  if ((r.WT_CERT_FILE === undefined) !== (r.WT_KEY_FILE === undefined)) {
    throw new ConfigError('invalid configuration:\n  WT_CERT_FILE / WT_KEY_FILE: set both or neither');
  }
  return deepFreeze({
    kafka: {
      brokers: r.KAFKA_BROKERS,
      topicNamespace: r.TOPIC_NAMESPACE,
      partitions: r.TOPIC_PARTITIONS,
      replicationFactor: r.TOPIC_REPLICATION_FACTOR,
      lagRefreshMs: r.KAFKA_LAG_REFRESH_MS,
    },
    db: {
      url: r.DATABASE_URL,
      schema: r.DATABASE_SCHEMA,
      poolMax: r.DATABASE_POOL_MAX,
      stallMs: r.DATABASE_STALL_MS,
    },
    api: {
      host: r.API_HOST,
      port: r.API_PORT,
      trustProxy: r.API_TRUST_PROXY.filter((a) => a !== 'none'),
      rateLimitMax: r.RATE_LIMIT_MAX,
      rateLimitWindowMs: r.RATE_LIMIT_WINDOW_MS,
      rateLimitRedisUrl: r.RATE_LIMIT_REDIS_URL,
      publicDir: r.PUBLIC_DIR,
    },
    engine: {
      speed: r.ROUND_SPEED,
      games: r.ROUND_GAMES,
      serverSeed: r.ROUND_SERVER_SEED,
      seedFile: r.ROUND_SEED_FILE,
      chainLength: r.ROUND_CHAIN_LENGTH,
      port: r.ROUND_ENGINE_PORT,
    },
    projector: { group: r.PROJECTOR_GROUP, port: r.PROJECTOR_PORT },
    edge: {
      host: r.EDGE_HOST,
      httpPort: r.EDGE_HTTP_PORT,
      wsPort: r.EDGE_WS_PORT,
      wsMaxBufferBytes: r.EDGE_WS_MAX_BUFFER_BYTES,
      wsIdleTimeoutS: r.EDGE_WS_IDLE_TIMEOUT_S,
      sseMaxBufferBytes: r.EDGE_SSE_MAX_BUFFER_BYTES,
      sseHeartbeatMs: r.EDGE_SSE_HEARTBEAT_MS,
      drainMs: r.EDGE_DRAIN_MS,
    },
    grpc: { host: r.GRPC_HOST, port: r.GRPC_PORT, maxBufferBytes: r.GRPC_MAX_BUFFER_BYTES },
    wt: {
      host: r.WT_HOST,
      port: r.WT_PORT,
      httpPort: r.WT_HTTP_PORT,
      certFile: r.WT_CERT_FILE ?? null,
      keyFile: r.WT_KEY_FILE ?? null,
      devCertDir: r.WT_DEV_CERT_DIR,
      maxSessions: r.WT_MAX_SESSIONS,
      handshakeTimeoutMs: r.WT_HANDSHAKE_TIMEOUT_MS,
    },
    gateway: {
      host: r.GATEWAY_HOST,
      port: r.GATEWAY_PORT,
      opsPort: r.GATEWAY_OPS_PORT,
      upstreams: {
        api: (r.GATEWAY_API_URL ?? localOrigin(r.API_HOST, r.API_PORT)).replace(/\/$/, ''),
        edgeHttp: (r.GATEWAY_EDGE_HTTP_URL ?? localOrigin(r.EDGE_HOST, r.EDGE_HTTP_PORT)).replace(/\/$/, ''),
        edgeWs: (r.GATEWAY_EDGE_WS_URL ?? localOrigin(r.EDGE_HOST, r.EDGE_WS_PORT)).replace(/\/$/, ''),
        wtHttp: (r.GATEWAY_WT_HTTP_URL ?? localOrigin(r.WT_HOST, r.WT_HTTP_PORT)).replace(/\/$/, ''),
      },
    },
    auth: {
      requireApi: r.AUTH_REQUIRE_API,
      requireWs: r.AUTH_REQUIRE_WS,
      requireSse: r.AUTH_REQUIRE_SSE,
      requireGrpc: r.AUTH_REQUIRE_GRPC,
      requireWt: r.AUTH_REQUIRE_WT,
      tokenSecret: r.AUTH_TOKEN_SECRET,
      tokenSecretFile: r.AUTH_TOKEN_SECRET_FILE,
      adminKey: r.AUTH_ADMIN_KEY,
      batchMs: r.AUTH_BATCH_MS,
    },
    bots: {
      players: r.BOTS_PLAYERS,
      apiUrl: (r.BOTS_API_URL ?? localOrigin(r.API_HOST, r.API_PORT)).replace(/\/$/, ''),
      operatorFile: r.BOTS_OPERATOR_FILE,
      betIntervalMs: r.BOTS_BET_INTERVAL_MS,
      httpPort: r.BOTS_HTTP_PORT,
    },
    sandbox: {
      host: r.SANDBOX_HOST,
      port: r.SANDBOX_PORT,
      signingSecret: r.SANDBOX_SIGNING_SECRET,
      secretFile: r.SANDBOX_SECRET_FILE,
      dbSchema: r.SANDBOX_DB_SCHEMA,
      initialBalanceMinor: Math.round(Number(r.SANDBOX_INITIAL_BALANCE) * 100),
    },
    walletSaga: {
      httpPort: r.WALLET_SAGA_HTTP_PORT,
      group: r.WALLET_SAGA_GROUP,
      maxInFlight: r.WALLET_SAGA_MAX_IN_FLIGHT,
      cacheMs: r.WALLET_SAGA_CACHE_MS,
      replayGroup: r.WALLET_REPLAY_GROUP,
    },
    settlement: { httpPort: r.SETTLEMENT_HTTP_PORT, group: r.SETTLEMENT_GROUP },
    access: { publicBaseUrl: r.PUBLIC_BASE_URL.replace(/\/$/, '') },
    logLevel: r.LOG_LEVEL,
    shutdownTimeoutMs: r.SHUTDOWN_TIMEOUT_MS,
  });
}
