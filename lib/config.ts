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
 * - DATABASE_URL: Postgres connection URL (postgres://casino:casino@127.0.0.1:55432/casino).
 * - DATABASE_SCHEMA: schema holding the read models and checkpoints (public).
 * - DATABASE_POOL_MAX: connections per process (10).
 * - API_HOST / API_PORT: REST listener (127.0.0.1 / 8085); the pages reach it through the gateway on 8080.
 * - API_TRUST_PROXY: comma-separated addresses/CIDRs of reverse proxies whose X-Forwarded-For the API
 *   believes, so the per-IP limit counts the browser, not the gateway (127.0.0.1,::1; `none` = no proxy).
 * - RATE_LIMIT_MAX / RATE_LIMIT_WINDOW_MS: anonymous REST limit per IP (100 per 60000 ms, seed 000 "Limits").
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
 */
import { resolve } from 'node:path';
import { z } from 'zod';
import { ConfigError } from './errors.ts';
import { GAME_SLUGS } from './games.ts';

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
  DATABASE_URL: z.string().url().default('postgres://casino:casino@127.0.0.1:55432/casino'),
  DATABASE_SCHEMA: z
    .string()
    .regex(/^[a-z_][a-z0-9_]{0,62}$/, 'a lower-case SQL identifier')
    .default('public'),
  DATABASE_POOL_MAX: int(1, 200).default(10),
  API_HOST: z.string().min(1).default('127.0.0.1'),
  API_PORT: int(0, 65535).default(8085),
  API_TRUST_PROXY: csv.default(['127.0.0.1', '::1']),
  RATE_LIMIT_MAX: int(1, 10_000_000).default(100),
  RATE_LIMIT_WINDOW_MS: int(1000, 86_400_000).default(60_000),
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
  EDGE_HOST: z.string().min(1).default('127.0.0.1'),
  EDGE_HTTP_PORT: int(0, 65535).default(8086),
  EDGE_WS_PORT: int(0, 65535).default(8087),
  EDGE_WS_MAX_BUFFER_BYTES: int(1024, 1 << 30).default(1 << 20),
  EDGE_WS_IDLE_TIMEOUT_S: int(8, 960).default(120),
  EDGE_SSE_MAX_BUFFER_BYTES: int(1024, 1 << 30).default(1 << 20),
  EDGE_SSE_HEARTBEAT_MS: int(50, 3_600_000).default(15_000),
  EDGE_DRAIN_MS: int(0, 600_000).default(5_000),
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
});

type Raw = z.infer<typeof schema>;

/** The validated configuration; deeply read-only. */
export interface Config {
  readonly kafka: {
    readonly brokers: readonly string[];
    readonly topicNamespace: string;
    readonly partitions: number;
    readonly replicationFactor: number;
  };
  readonly db: { readonly url: string; readonly schema: string; readonly poolMax: number };
  readonly api: {
    readonly host: string;
    readonly port: number;
    /** Trusted reverse-proxy addresses; empty when API_TRUST_PROXY is `none`. */
    readonly trustProxy: readonly string[];
    readonly rateLimitMax: number;
    readonly rateLimitWindowMs: number;
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
  readonly logLevel: Raw['LOG_LEVEL'];
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
    },
    db: { url: r.DATABASE_URL, schema: r.DATABASE_SCHEMA, poolMax: r.DATABASE_POOL_MAX },
    api: {
      host: r.API_HOST,
      port: r.API_PORT,
      trustProxy: r.API_TRUST_PROXY.filter((a) => a !== 'none'),
      rateLimitMax: r.RATE_LIMIT_MAX,
      rateLimitWindowMs: r.RATE_LIMIT_WINDOW_MS,
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
    logLevel: r.LOG_LEVEL,
  });
}
