/**
 * Test support for the gRPC transport's integration tests (not a test file): a transport on port
 * 0 fed by a hub the test publishes into, optionally with the read models in a Postgres schema
 * of its own, and promise helpers around the grpc-js client.
 */
import { randomBytes } from 'node:crypto';
import { type ClientReadableStream, Metadata, type ServiceError } from '@grpc/grpc-js';
import Fastify from 'fastify';
import { MemoryKeyTable } from '../../lib/auth/key-table.ts';
import { migrate } from '../../lib/db/migrate.ts';
import { createSql, type Sql } from '../../lib/db/pool.ts';
import { createKafka } from '../../lib/log/kafka.ts';
import { topicName } from '../../lib/log/topics.ts';
import { createLogger } from '../../lib/logger.ts';
import { createStreamAccess } from '../../lib/stream/access.ts';
import { createStreamCore } from '../../lib/stream/core.ts';
import { FanOutHub } from '../../lib/stream/hub.ts';
import { createEdgeMetrics, type EdgeMetrics } from '../../lib/stream/metrics.ts';
import { createGrpcTransport, type GrpcTransport } from '../../services/edge/transports/grpc/grpc.ts';
import {
  createDataStreamClient,
  type DataStreamClient,
  type RoundMsg,
} from '../../services/edge/transports/grpc/proto.ts';
import type { EdgeContext } from '../../services/edge/transports/transport.ts';
import { type Config, loadConfig } from './config.ts';

export interface TestGrpc {
  readonly transport: GrpcTransport;
  readonly hub: FanOutHub;
  readonly metrics: EdgeMetrics;
  readonly client: DataStreamClient;
  readonly config: Config;
  readonly ctx: EdgeContext;
  readonly sql?: Sql;
  /** The key table behind the transport's credential checks; tests apply key events to it. */
  readonly table: MemoryKeyTable;
  /** Closes the client, stops the transport (drain 0), drops the schema, ends the pool. */
  close(): Promise<void>;
}

/** Starts a gRPC transport on 127.0.0.1:0; with `db`, on a migrated schema `t_grpc_<random>`. */
export async function startTestGrpc(
  options: { db?: boolean; overrides?: Record<string, string | number> } = {},
): Promise<TestGrpc> {
  const schema = `t_grpc_${randomBytes(4).toString('hex')}`;
  const config = loadConfig(process.env, {
    DATABASE_SCHEMA: schema,
    GRPC_PORT: 0,
    LOG_LEVEL: 'silent',
    // These tests are about the service, not credentials (grpc-auth.int.test.ts turns it on).
    AUTH_REQUIRE_GRPC: 'false',
    ...options.overrides,
  });
  const logger = createLogger('edge-test', config.process.logLevel);
  let sql: Sql | undefined;
  if (options.db) {
    sql = createSql(config, { max: 2 });
    await migrate(sql, schema);
  }
  const hub = new FanOutHub();
  const metrics = createEdgeMetrics();
  const table = new MemoryKeyTable(randomBytes(32));
  const { requireWs: ws, requireSse: sse, requireGrpc: grpc, requireWt: wt } = config.auth;
  const access = createStreamAccess({ table, require: { ws, sse, grpc, wt }, metrics });
  const kafka = createKafka(config, 'grpc-test', logger); // never connected: the test feeds the hub
  // No live source: a catch-up would end at once (no partitions), and the log reader is not started.
  const core = createStreamCore({
    hub,
    source: { positions: () => new Map() },
    kafka,
    topic: topicName(config, 'rounds'),
    config: config.stream,
    logger,
    metrics,
  });
  const ctx: EdgeContext = { hub, config, logger, kafka, metrics, http: Fastify(), sql, access, core };
  const transport = createGrpcTransport();
  await transport.start(ctx);
  const client = createDataStreamClient(transport.address);
  return {
    transport,
    hub,
    metrics,
    client,
    config,
    ctx,
    sql,
    table,
    async close() {
      client.close();
      access.close();
      await transport.stop(0);
      await ctx.http.close();
      if (sql) {
        await sql.unsafe(`drop schema if exists "${schema}" cascade`);
        await sql.end({ timeout: 5 });
      }
    },
  };
}

/** A unary call as a promise (deadline 5 s). */
export function unary<Req, Res>(
  fn: (
    req: Req,
    md: Metadata,
    opts: { deadline: number },
    cb: (e: ServiceError | null, r?: Res) => void,
  ) => unknown,
  req: Req,
): Promise<Res> {
  return new Promise((resolve, reject) => {
    fn(req, new Metadata(), { deadline: Date.now() + 5000 }, (err, res) =>
      err ? reject(err) : resolve(res as Res),
    );
  });
}

/** A server stream being read: messages so far, and promises of its start and its end. */
export interface OpenStream {
  readonly call: ClientReadableStream<RoundMsg>;
  readonly messages: RoundMsg[];
  /** Resolves when the response headers arrive (the server accepted the stream). */
  readonly started: Promise<void>;
  /** Resolves with the error that ended the stream (never resolves while it is open). */
  readonly ended: Promise<ServiceError>;
  /** Resolves once `n` messages have arrived; rejects if the stream ends first or after 10 s. */
  waitFor(n: number): Promise<RoundMsg[]>;
}

/** Starts reading `call` into an {@link OpenStream}. */
export function track(call: ClientReadableStream<RoundMsg>): OpenStream {
  const messages: RoundMsg[] = [];
  const waiters: { n: number; resolve: () => void }[] = [];
  let endErr: ServiceError | undefined;
  const started = new Promise<void>((resolve, reject) => {
    call.once('metadata', () => resolve());
    call.once('error', reject);
  });
  started.catch(() => {});
  const ended = new Promise<ServiceError>((resolve) =>
    call.on('error', (e: ServiceError) => {
      endErr = e;
      resolve(e);
    }),
  );
  call.on('data', (m: RoundMsg) => {
    messages.push(m);
    for (const w of waiters) if (messages.length >= w.n) w.resolve();
  });
  return {
    call,
    messages,
    started,
    ended,
    waitFor(n) {
      return new Promise((resolve, reject) => {
        if (messages.length >= n) return resolve(messages.slice());
        const timer = setTimeout(
          () => reject(new Error(`timeout: ${messages.length}/${n} messages`)),
          10_000,
        );
        waiters.push({
          n,
          resolve: () => {
            clearTimeout(timer);
            resolve(messages.slice());
          },
        });
        void ended.then(() => {
          if (messages.length < n)
            reject(new Error(`stream ended (${endErr?.code}) at ${messages.length}/${n}`));
        });
      });
    },
  };
}
