/**
 * The contract between the edge (edge.ts) and its wire protocols (docs/conventions.md §8; centrifugo's
 * per-transport packages): what a transport gets at start, and what it must do. It lives apart from
 * the composition root so the transports and edge.ts do not import each other.
 */
import type { FastifyInstance } from 'fastify';
import type { Kafka } from 'kafkajs';
import type { GuardedStreamAccess } from '../../../lib/auth/failure-budget.ts';
import type { Sql } from '../../../lib/db/pool.ts';
import type { Logger } from '../../../lib/logger.ts';
import type { StreamCore } from '../../../lib/stream/core.ts';
import type { FanOutHub } from '../../../lib/stream/hub.ts';
import type { EdgeMetrics } from '../../../lib/stream/metrics.ts';
import type { EdgeConfig } from '../config.ts';

/** What a transport gets at start. */
export interface EdgeContext {
  readonly hub: FanOutHub;
  readonly config: EdgeConfig;
  readonly logger: Logger;
  readonly kafka: Kafka;
  readonly metrics: EdgeMetrics;
  /** The edge's HTTP server, not yet listening: add routes in `start`, never later. */
  readonly http: FastifyInstance;
  /** Read-model database, when the edge was given one (gRPC GetHistory). */
  readonly sql?: Sql;
  /**
   * Credential checks for new streams (lib/stream/access.ts) behind the failed-credential budget
   * (lib/auth/failure-budget.ts); every stream transport calls it, with the client's address,
   * before opening.
   */
  readonly access: GuardedStreamAccess;
  /** Resumes, catch-ups and subscriptions (lib/stream/core.ts), shared by every transport. */
  readonly core: StreamCore;
}

/** One wire protocol of the edge (centrifugo's per-transport packages). */
export interface Transport {
  /** Short name, also the `protocol` label of metrics (ws, sse, grpc, …). */
  readonly name: string;
  /** Registers routes on `ctx.http` and/or opens its own listener. */
  start(ctx: EdgeContext): Promise<void>;
  /** Stops accepting, then closes open streams spread over `drainMs` ms; resolves when all are closed. */
  stop(drainMs: number): Promise<void>;
  /** The port of the transport's own listener once started (absent when it uses `ctx.http`). */
  readonly port?: number;
}
