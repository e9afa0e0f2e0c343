/**
 * The stream core of one edge process (both edges build one): the hub, the rounds source, and
 * what resumes need — the newest rounds in memory, the log reader, the catch-up scheduler — behind
 * the `SubscriptionHost` every transport's subscriptions run on (lib/stream/subscriber.ts).
 */
import type { Kafka } from 'kafkajs';
import type { SharedConfig } from '../config/shared.ts';
import { topicName } from '../log/topics.ts';
import type { Logger } from '../logger.ts';
import { CatchUpScheduler, memoryCursor } from './catch-up.ts';
import type { StreamConfig } from './config.ts';
import { FanOutHub, type Selection } from './hub.ts';
import { LifecycleUpdate } from './lifecycle.ts';
import { logCursor } from './log-cursor.ts';
import { LogHistory } from './log-history.ts';
import type { EdgeMetrics } from './metrics.ts';
import type { Position, PositionTracker } from './position.ts';
import { RecentRounds } from './recent.ts';
import { decideResume, LOOKBACK_MARGIN_MS, type ResumeDecision } from './resume.ts';
import { slugsOf } from './selection.ts';
import { createRoundSource, type RoundSource } from './source.ts';
import type { CatchUpPlan, StartOutcome, SubscriptionHost } from './subscriber.ts';

export interface StreamCoreDeps {
  readonly hub: FanOutHub;
  readonly source: Pick<RoundSource, 'positions'>;
  readonly kafka: Kafka;
  /** Full name of the rounds topic. */
  readonly topic: string;
  readonly config: StreamConfig;
  readonly logger: Logger;
  readonly metrics: Pick<EdgeMetrics, 'catchUpActive' | 'resumes' | 'catchUpRounds'>;
}

export interface StreamCore extends SubscriptionHost {
  readonly recent: RecentRounds;
  readonly history: LogHistory;
  /** Subscriptions limit per multiplexed connection (STREAM_MAX_SUBSCRIPTIONS). */
  readonly maxSubscriptions: number;
  /** decideResume on this edge's hub (lib/stream/resume.ts). */
  decide(selection: Selection, raw: string | undefined): Promise<ResumeDecision>;
  /** Starts the log reader in the background and keeps the recent rounds; call once the source has bootstrapped. */
  start(): void;
  /** Ends running catch-ups, stops the log reader. */
  stop(): Promise<void>;
  /** Counts a resume in `edge_resumes_total` and its replayed rounds (a fresh subscription counts nothing). */
  report(protocol: string, decision: ResumeDecision, outcome?: StartOutcome): void;
}

/** Builds the core; nothing is connected until `start()`. */
export function createStreamCore(deps: StreamCoreDeps): StreamCore {
  const { hub, config } = deps;
  const log = deps.logger.child({ component: 'stream-core' });
  const recent = new RecentRounds();
  const history = new LogHistory({ kafka: deps.kafka, topic: deps.topic, logger: log });
  const scheduler = new CatchUpScheduler({
    perSubscriberRate: config.catchUpRate,
    totalRate: config.catchUpTotalRate,
    sliceMs: config.catchUpSliceMs,
  });
  let unsubscribeRecent: (() => void) | undefined;
  const active = deps.metrics.catchUpActive;
  const run = scheduler.run.bind(scheduler);
  scheduler.run = (job) => {
    active.inc();
    return run(job).finally(() => active.dec());
  };

  const plan = async (
    selection: Selection,
    p: Position,
    to: ReadonlyMap<number, bigint>,
    tracker: PositionTracker,
  ): Promise<CatchUpPlan> => {
    const inMemory = recent.since(selection, p);
    if (inMemory) return { cursor: memoryCursor(inMemory), source: 'memory' };
    const from = await history.offsetsForTime(p.t > 0 ? p.t - LOOKBACK_MARGIN_MS : 0);
    return {
      cursor: logCursor({
        history,
        from,
        to,
        games: new Set(slugsOf(selection)),
        after: (slug) => tracker.lastOf(slug) ?? 0,
      }),
      source: 'log',
    };
  };

  return {
    hub,
    scheduler,
    recent,
    history,
    maxSubscriptions: config.maxSubscriptions,
    positions: () => deps.source.positions(),
    plan,
    decide: (selection, raw) => decideResume(hub, selection, raw),
    start() {
      for (const d of hub.latest({ kind: 'all' })) recent.deliver(d);
      unsubscribeRecent = hub.tap(recent);
      history
        .start()
        .catch((err: Error) =>
          log.warn({ err: err.message }, 'log reader not started; retried on the first resume'),
        );
    },
    report(protocol, decision, outcome) {
      if (decision.kind === 'fresh') return;
      const result =
        decision.kind === 'refused'
          ? 'refused'
          : decision.kind === 'live'
            ? 'incomplete'
            : outcome?.result?.outcome === 'done'
              ? 'complete'
              : outcome?.result?.outcome === 'failed'
                ? 'failed'
                : undefined;
      if (result) deps.metrics.resumes.inc({ protocol, result });
      if (outcome?.info.replayed) deps.metrics.catchUpRounds.inc({ protocol }, outcome.info.replayed);
    },
    async stop() {
      scheduler.stopAll();
      unsubscribeRecent?.();
      await history.stop();
    },
  };
}

/** The stream pieces of one edge process: its hub, its rounds source feeding it, and its core. */
export interface EdgeStreams {
  readonly hub: FanOutHub;
  readonly source: RoundSource;
  readonly core: StreamCore;
}

/**
 * Builds the hub, the source of every partition of `rounds` (lifecycle events go to the hub too)
 * and the stream core, as both edges run them. Start the source, then the core.
 */
export function createEdgeStreams(deps: {
  readonly kafka: Kafka;
  readonly config: Pick<SharedConfig, 'kafka'> & { readonly stream: StreamConfig };
  readonly logger: Logger;
  readonly metrics: EdgeMetrics;
}): EdgeStreams {
  const { kafka, config, logger, metrics } = deps;
  const hub = new FanOutHub();
  const source = createRoundSource({
    kafka,
    config,
    logger,
    hub,
    metrics,
    onLifecycle: (event, at) => hub.publishLifecycle(new LifecycleUpdate(event, at)),
  });
  const core = createStreamCore({
    hub,
    source,
    kafka,
    topic: topicName(config, 'rounds'),
    config: config.stream,
    logger,
    metrics,
  });
  return { hub, source, core };
}
