/**
 * The wallet saga: per-bet process managers over `wallet-transactions` and a durable
 * callback dispatcher, composed. Any number of instances run side by side: the processes share
 * the topic's partitions through the consumer group (WALLET_SAGA_GROUP), the dispatchers share
 * wallet_callbacks through row leases.
 *
 * - processes.ts: a checkpointed consumer (lib/log/checkpointed-consumer.ts) whose one-statement
 *   writes hold the bets' states, the callbacks they ask for and the events they append;
 * - dispatcher.ts: leases due callbacks, sends them, stores each answer's result and fact;
 * - outbox.ts: appends the facts and decisions after their commit (a relay for those left behind);
 * - prober.ts: half-open balance probes of operators whose circuit breaker is open (a probe that
 *   closes one pulls the operator's waiting retries forward, as a failing path answering again does).
 *
 * Crash and kill safety: a SIGKILL between a commit and its append leaves the event in the outbox
 * (appended by the relay); between an HTTP answer and its stored result, the lease runs out and the
 * callback is sent again with the same provider_tx_id and webhook-id, which the operator answers
 * with its first answer (or "duplicate", taken as the first answer). Nothing is decided twice:
 * a bet's process state and the checkpoint move in one statement.
 */
import type { Kafka, Producer } from 'kafkajs';
import type { Sql } from '../../lib/db/pool.ts';
import { type CallbackClient, createCallbackClient } from '../../lib/http/callback-client.ts';
import {
  buildCheckpointedConsumer,
  type CheckpointedConsumer,
  type ConsumerStatus,
} from '../../lib/log/checkpointed-consumer.ts';
import { topicName } from '../../lib/log/topics.ts';
import type { Logger } from '../../lib/logger.ts';
import { currencyTable } from '../../rules/money/currencies.ts';
import type { WalletSagaConfig } from './config.ts';
import { createDirectory, type Directory } from './directory.ts';
import { createDispatcher, type Dispatcher } from './dispatcher.ts';
import { createSagaMetrics, type SagaMetrics } from './metrics.ts';
import { createOutbox, type Outbox } from './outbox.ts';
import { createProber, type Prober } from './prober.ts';
import { processesSpec } from './processes.ts';
import { SendQueue } from './send-queue.ts';

export interface WalletSagaDeps {
  readonly config: Pick<WalletSagaConfig, 'kafka' | 'walletSaga' | 'db' | 'money'>;
  readonly kafka: Kafka;
  readonly sql: Sql;
  readonly logger: Logger;
  /** Unix ms clock (default Date.now); tests move it to reach retries hours away. */
  readonly now?: () => number;
  /** Jitter source in [0, 1) (default Math.random). */
  readonly random?: () => number;
}

export interface WalletSaga {
  /** Connects, joins the group and starts consuming and dispatching. @throws kafkajs or postgres.js errors. */
  start(): Promise<void>;
  /** Stops consuming and leasing, lets attempts in progress finish (bounded), disconnects. */
  stop(): Promise<void>;
  /** Processes' consumer in its group with its database (it retries transient failures itself). */
  ready(): boolean;
  status(): ConsumerStatus & { inFlight: number };
  /** Resolves when the dispatcher has nothing in flight. */
  idle(): Promise<void>;
  readonly metrics: SagaMetrics;
  /** Runs one pass of the breaker probes (tests). */
  probeBreakers(): Promise<void>;
}

/** Builds the saga; nothing connects before `start`. */
export function buildWalletSaga(deps: WalletSagaDeps): WalletSaga {
  const { config, kafka, sql, logger } = deps;
  const cfg = config.walletSaga;
  const log = logger.child({ component: 'wallet-saga', instance: cfg.instance });
  const now = deps.now ?? Date.now;
  const metrics = createSagaMetrics();
  const directory: Directory = createDirectory(sql, cfg.cacheMs);
  // As many sockets per operator as the send queue lets callbacks through (so the agent never
  // queues), and one more for the breaker's balance probe.
  const sendQueue = new SendQueue(cfg.operatorConcurrency);
  const client: CallbackClient = createCallbackClient(cfg.operatorConcurrency + 1);
  const producer: Producer = kafka.producer({
    idempotent: true,
    maxInFlightRequests: 1,
    allowAutoTopicCreation: false,
  });
  const outbox: Outbox = createOutbox({
    sql,
    producer,
    topic: topicName(config, 'walletTransactions'),
    logger: log,
  });
  let stopping = false;
  const dispatcher: Dispatcher = createDispatcher({
    sql,
    directory,
    client,
    outbox,
    metrics,
    logger: log,
    owner: cfg.instance,
    now,
    random: deps.random ?? Math.random,
    maxInFlight: cfg.maxInFlight,
    sendQueue,
    pollMs: cfg.pollMs,
    leaseMs: cfg.leaseMs,
    leaseMarginMs: 5_000,
    breaker: cfg.breaker,
    currencies: currencyTable(config.money.crypto),
    pullForward: cfg.pullForward,
  });
  const prober: Prober = createProber({
    sql,
    directory,
    client,
    metrics,
    logger: log,
    now,
    breaker: cfg.breaker,
    intervalMs: Math.min(1_000, cfg.breaker.cooldownMs),
    // A closed breaker means the operator is back: its waiting retries go now.
    onClosed: (operatorId) => dispatcher.pullForward(operatorId),
  });
  const consumer: CheckpointedConsumer = buildCheckpointedConsumer(
    processesSpec({ outbox, metrics, logger: log, now, onCallbacks: () => dispatcher.wake() }),
    {
      config,
      kafka,
      sql,
      logger: log,
      groupId: cfg.group,
      maxWaitTimeInMs: 50,
      commitOffsets: true,
      lagName: 'wallet-saga',
      options: { registry: metrics.registry },
    },
  );
  // Callbacks waiting, all instances: sampled for the gauge.
  let sampler: NodeJS.Timeout | null = null;
  const sample = async () => {
    const rows = await sql<{ status: string; n: string }[]>`
      select status, count(*)::text as n from wallet_callbacks
      where status in ('due', 'in_flight', 'parked') group by status`;
    for (const s of ['due', 'in_flight', 'parked']) metrics.waiting.set({ status: s }, 0);
    for (const r of rows) metrics.waiting.set({ status: r.status }, Number(r.n));
  };

  return {
    metrics,
    ready: () => consumer.ready() && !stopping,
    status: () => ({ ...consumer.status(), inFlight: dispatcher.inFlight }),
    idle: () => dispatcher.idle(),
    probeBreakers: () => prober.probeOnce(),
    async start() {
      await producer.connect();
      await consumer.start();
      dispatcher.start();
      outbox.startRelay();
      prober.start();
      sampler = setInterval(() => {
        sample().catch(() => {});
      }, 5_000);
      sampler.unref();
      log.info('wallet saga started');
    },
    async stop() {
      if (stopping) return;
      stopping = true;
      if (sampler) clearInterval(sampler);
      // No new lease from here; an attempt in progress ends by its own timeout at the latest, its
      // result stored and appended (one cut off is sent again, same id, by whoever leases it next).
      await dispatcher.stop(15_000);
      await consumer.stop();
      await Promise.all([outbox.stop(), prober.stop()]);
      await producer.disconnect().catch(() => {});
      client.close();
      log.info('wallet saga stopped');
    },
  };
}
