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
 * - API_HOST / API_PORT: REST listener (127.0.0.1 / 8080).
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
 */
import { resolve } from 'node:path';
import { z } from 'zod';
import { ConfigError } from './errors.ts';
import { GAME_SLUGS } from './games.ts';

const int = (min: number, max: number) => z.coerce.number().int().min(min).max(max);
const csv = z
  .string()
  .transform((s) => s.split(',').map((p) => p.trim()))
  .pipe(z.array(z.string().min(1)).min(1));

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
  API_PORT: int(0, 65535).default(8080),
  RATE_LIMIT_MAX: int(1, 10_000_000).default(100),
  RATE_LIMIT_WINDOW_MS: int(1000, 86_400_000).default(60_000),
  PUBLIC_DIR: z
    .string()
    .min(1)
    .default(resolve(import.meta.dirname, '..', 'public')),
  ROUND_SPEED: z.coerce.number().positive().max(1000).default(1),
  ROUND_GAMES: csv.pipe(z.array(z.enum(GAME_SLUGS))).default([...GAME_SLUGS]),
  ROUND_SERVER_SEED: z
    .string()
    .regex(/^([0-9a-f]{64})?$/, '64 lower-case hex characters')
    .default(''),
  ROUND_SEED_FILE: z
    .string()
    .min(1)
    .default(resolve(import.meta.dirname, '..', '.data', 'round-engine', 'server-seed')),
  ROUND_CHAIN_LENGTH: int(10, 10_000_000).default(100_000),
  ROUND_ENGINE_PORT: int(0, 65535).default(8081),
  PROJECTOR_PORT: int(0, 65535).default(8082),
  PROJECTOR_GROUP: z.string().min(1).default('projector-rounds'),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
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
  readonly logLevel: Raw['LOG_LEVEL'];
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
    logLevel: r.LOG_LEVEL,
  });
}
