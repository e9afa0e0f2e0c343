/**
 * Prometheus metrics of an edge node (docs/conventions.md §12). Each edge gets its own registry so that two
 * edges in one process (tests) do not collide. Every transport labels its figures with
 * `protocol` (ws, sse, grpc, …); the label set is fixed by the code, never by a request. The
 * rounds source's lag per partition is the common `kafka_consumer_lag{consumer="edge-source"}`
 * (lib/log/consumer-lag.ts).
 */
import { Counter, Gauge, type Registry } from 'prom-client';
import { createServiceRegistry } from '../metrics.ts';

export interface EdgeMetrics {
  readonly register: Registry;
  /** Open subscriptions per protocol. */
  readonly subscribers: Gauge<'protocol'>;
  /** Rounds handed to a subscriber's socket, per protocol (on the fan-out path: `deliveryCount`). */
  readonly deliveries: Counter<'protocol'>;
  /**
   * The fan-out's count of delivered rounds for `protocol`, added to `deliveries` when the registry
   * is read: counting costs a number addition, where prom-client's `inc` hashes its labels and
   * allocates on every call (once per subscriber per round).
   */
  deliveryCount(protocol: string): DeliveryCount;
  /** Subscribers closed because their unsent bytes passed the buffer limit. */
  readonly slowCloses: Counter<'protocol'>;
  /** New streams refused by the credential check (access.ts), by protocol and reason. */
  readonly authRefusals: Counter<'protocol' | 'reason'>;
  /** Open streams closed because their key was revoked or deleted, by protocol. */
  readonly revokedCloses: Counter<'protocol'>;
  /** SSE resumes from a Last-Event-ID, by where the missed rounds came from (memory, log, failed). */
  readonly sseResumes: Counter<'source'>;
  /** Records of `rounds` the edge could not decode and skipped. */
  readonly undecodable: Counter<string>;
  /**
   * RoundFinished records the edge's source refused and did not stream (rules/rounds/admission.ts),
   * by reason: `future`, `past`, `duplicate`, `conflict`.
   */
  readonly refused: Counter<'reason'>;
  /**
   * Subscriptions that asked to resume from a position, by protocol and result: `complete` (every
   * missed round replayed), `incomplete` (a fresh live start: a position ahead of the log),
   * `refused` (malformed, oversized, other games), `failed` (the log could not be read).
   */
  readonly resumes: Counter<'protocol' | 'result'>;
  /** Rounds replayed by catch-ups, by protocol. */
  readonly catchUpRounds: Counter<'protocol'>;
  /** Subscriptions catching up now. */
  readonly catchUpActive: Gauge<string>;
}

/** Rounds delivered since the registry was last read (see EdgeMetrics.deliveryCount). */
export class DeliveryCount {
  /** Not yet added to the counter. */
  pending = 0;

  /** Counts `n` rounds delivered (default 1). */
  add(n = 1): void {
    this.pending += n;
  }
}

/**
 * Creates the per-protocol series of `protocol` at 0, so dashboards and alerts see a protocol
 * before its first subscriber (Prometheus instrumentation practice: no missing series).
 */
export function initProtocolSeries(metrics: EdgeMetrics, protocol: string): void {
  metrics.subscribers.inc({ protocol }, 0);
  metrics.deliveries.inc({ protocol }, 0);
  metrics.slowCloses.inc({ protocol }, 0);
  metrics.catchUpRounds.inc({ protocol }, 0);
}

/** A fresh registry with the default process metrics, `service="<service>"` and the edge's own. */
export function createEdgeMetrics(service: 'edge' | 'edge-webtransport' = 'edge'): EdgeMetrics {
  const register = createServiceRegistry(service);
  const registers = [register];
  const counts = new Map<string, DeliveryCount>();
  const deliveries = new Counter({
    name: 'edge_deliveries_total',
    help: 'Rounds written to subscribers, by protocol.',
    labelNames: ['protocol'] as const,
    registers,
    collect() {
      for (const [protocol, c] of counts) {
        if (c.pending > 0) this.inc({ protocol }, c.pending);
        c.pending = 0;
      }
    },
  });
  return {
    register,
    subscribers: new Gauge({
      name: 'edge_subscribers',
      help: 'Open stream subscriptions, by protocol.',
      labelNames: ['protocol'] as const,
      registers,
    }),
    deliveries,
    deliveryCount(protocol) {
      let c = counts.get(protocol);
      if (!c) {
        c = new DeliveryCount();
        counts.set(protocol, c);
      }
      return c;
    },
    slowCloses: new Counter({
      name: 'edge_slow_subscriber_closes_total',
      help: 'Subscribers closed because their unsent bytes passed the buffer limit, by protocol.',
      labelNames: ['protocol'] as const,
      registers,
    }),
    authRefusals: new Counter({
      name: 'edge_auth_refusals_total',
      help: 'New streams refused by the credential check, by protocol and reason (missing, malformed, unknown, expired, revoked, origin, scope, rate_limited).',
      labelNames: ['protocol', 'reason'] as const,
      registers,
    }),
    revokedCloses: new Counter({
      name: 'edge_revoked_closes_total',
      help: 'Open streams closed because the key they authenticated with was revoked or deleted, by protocol.',
      labelNames: ['protocol'] as const,
      registers,
    }),
    sseResumes: new Counter({
      name: 'edge_sse_resumes_total',
      help: 'SSE reconnects resumed from Last-Event-ID, by source of the missed rounds (memory, log, failed).',
      labelNames: ['source'] as const,
      registers,
    }),
    undecodable: new Counter({
      name: 'edge_undecodable_records_total',
      help: 'Records of the rounds topic that could not be decoded and were skipped.',
      registers,
    }),
    refused: new Counter({
      name: 'edge_refused_rounds_total',
      help: 'RoundFinished records of the rounds topic refused by the admission rule and not streamed, by reason (future, past, duplicate, conflict).',
      labelNames: ['reason'] as const,
      registers,
    }),
    resumes: new Counter({
      name: 'edge_resumes_total',
      help: 'Subscriptions that asked to resume from a position, by protocol and result (complete, incomplete, refused, failed).',
      labelNames: ['protocol', 'result'] as const,
      registers,
    }),
    catchUpRounds: new Counter({
      name: 'edge_catchup_rounds_total',
      help: 'Rounds replayed to resuming subscribers, by protocol.',
      labelNames: ['protocol'] as const,
      registers,
    }),
    catchUpActive: new Gauge({
      name: 'edge_catchup_active',
      help: 'Subscriptions catching up now.',
      registers,
    }),
  };
}
