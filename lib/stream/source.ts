/**
 * The edge's own reader of every partition of `rounds` (docs/architecture.md "Edge nodes
 * are stateless"). Each process follows the topic with the topic follower (lib/log/topic-follower.ts:
 * a consumer group of its own, `edge-<uuid>`, that commits nothing), so any number of edges each
 * see every round and a restarted edge starts fresh.
 *
 * Start-up: (a) the high-water marks are captured; (b) the newest round of each game is found by
 * reading the log tail backwards and published to the hub before any subscriber can exist, so
 * `hub.latest()` (SSE `initial`, gRPC GetLatest) works at once; (c) the live consumer seeks every
 * partition to the captured marks, so nothing appended during (b) is missed. The hub drops a round
 * it has published already, so the overlap of (b) and (c) is never delivered twice.
 *
 * Every RoundFinished goes through the admission rule (rules/rounds/admission.ts) before the hub: a
 * round from the future or the past, a duplicate or a conflicting duplicate is skipped and counted
 * (`edge_refused_rounds_total{reason}`), never published, so it cannot stand as a game's latest
 * round and make the hub or a subscriber's position skip the rounds after it. A round of a lower id
 * than one published is streamed like any other (deduplicated by id, not by a high-water mark).
 */
import type { Kafka } from 'kafkajs';
import { GAME_SLUGS } from '../../rules/games/catalog.ts';
import { admitByTime, REFUSAL_REASONS, RoundLedger } from '../../rules/rounds/admission.ts';
import type { RoundEvent, RoundLifecycle } from '../../rules/rounds/round.ts';
import type { SharedConfig } from '../config/shared.ts';
import { partitionOffsets } from '../log/kafka.ts';
import { decodeRoundEvent } from '../log/rounds-codec.ts';
import { scanBackward } from '../log/rounds-log.ts';
import { createTopicFollower, type FollowedRecords, type TopicFollower } from '../log/topic-follower.ts';
import { topicName } from '../log/topics.ts';
import type { Logger } from '../logger.ts';
import { Delivery, type FanOutHub } from './hub.ts';
import type { EdgeMetrics } from './metrics.ts';

/**
 * Records per partition the start-up scan reads at most while some game is still not found (a
 * game with no round in the newest 20,000 records gets no `initial` until its next round). It
 * bounds start-up time on a topic kept forever.
 */
const BOOTSTRAP_MAX_RECORDS_PER_PARTITION = 20_000;
const BOOTSTRAP_CHUNK = 500;
/** Broker fetch wait, ms: short, because every ms here is delivery latency when rounds are sparse. */
const FETCH_MAX_WAIT_MS = 25;

export interface RoundSource {
  /** Full name of the rounds topic read. */
  readonly topic: string;
  /** True once the live consumer has joined and fetched from the start marks. */
  readonly ready: boolean;
  /**
   * The next offset to read per partition: every record below it has been handed to the hub (or
   * the lifecycle hook). Before `start` has captured the marks, empty. A catch-up that starts now
   * ends here (lib/stream/subscriber.ts).
   */
  positions(): ReadonlyMap<number, bigint>;
  /**
   * Finds the latest round per game, then starts consuming live.
   * @throws when the broker cannot be reached (kafkajs retries first) or the topic is missing.
   */
  start(): Promise<void>;
  /** Disconnects the consumer; idempotent. */
  stop(): Promise<void>;
}

export interface RoundSourceDeps {
  readonly kafka: Kafka;
  readonly config: Pick<SharedConfig, 'kafka'>;
  readonly logger: Logger;
  readonly hub: FanOutHub;
  readonly metrics: EdgeMetrics;
  /**
   * Receives each RoundOpened and BettingClosed read live, with its append time (Unix ms), for the
   * streams' opt-in lifecycle messages; at start-up also the newest one of each game whose round
   * has not finished yet (its current phase). Cash-out decisions on the topic are never streamed.
   */
  readonly onLifecycle?: (
    event: RoundLifecycle,
    appendedAt: number,
    partition: number,
    offset: bigint,
  ) => void;
}

/** Kafka message timestamp (ms, string) to a number; the append time of the stream form. */
function appendTime(ts: string): number {
  const n = Number(ts);
  return Number.isFinite(n) ? n : 0;
}

/** The rounds source of one edge process. */
export function createRoundSource(deps: RoundSourceDeps): RoundSource {
  const { kafka, hub, metrics } = deps;
  const log = deps.logger.child({ component: 'edge-source' });
  const topic = topicName(deps.config, 'rounds');
  let follower: TopicFollower | undefined;
  let stopped = false;
  const ledger = new RoundLedger();
  for (const reason of REFUSAL_REASONS) metrics.refused.inc({ reason }, 0);

  /** Publishes `d` unless the admission rule refuses it (then counted, and logged unless a duplicate). */
  const admit = (d: Delivery): void => {
    const a = ledger.admit(d.round, d.appendedAt);
    if (!a.admitted) {
      metrics.refused.inc({ reason: a.reason });
      if (a.reason !== 'duplicate')
        log.warn(
          {
            partition: d.partition,
            offset: String(d.offset),
            round_id: d.round.round_id,
            reason: a.reason,
            detail: a.detail,
          },
          'round refused, not streamed',
        );
      return;
    }
    hub.publish(d);
  };

  const decode = (value: Buffer | null, partition: number, offset: string): RoundEvent | undefined => {
    try {
      return decodeRoundEvent(value);
    } catch (err) {
      // The projector dead-letters such a record; the edge only skips it.
      metrics.undecodable.inc();
      log.warn({ partition, offset, err: (err as Error).message }, 'skipping undecodable record');
      return undefined;
    }
  };

  async function bootstrap(): Promise<Map<number, bigint>> {
    const marks = new Map<number, bigint>();
    for (const [p, o] of await partitionOffsets(kafka, topic)) marks.set(p, o.high);
    const newest = new Map<string, Delivery>();
    const phases = new Map<
      string,
      { event: RoundLifecycle; at: number; partition: number; offset: bigint }
    >();
    let scanned = 0;
    const limit = BOOTSTRAP_MAX_RECORDS_PER_PARTITION * Math.max(1, marks.size);
    await scanBackward(
      kafka,
      topic,
      (round, r) => {
        scanned++;
        if (round.type === 'RoundOpened' || round.type === 'BettingClosed') {
          // Newest first within a partition: the first lifecycle event met per game is its latest.
          if (!phases.has(round.game_slug))
            phases.set(round.game_slug, {
              event: round,
              at: appendTime(r.message.timestamp),
              partition: r.partition,
              offset: BigInt(r.offset),
            });
          return;
        }
        if (round.type !== 'RoundFinished') return;
        const at = appendTime(r.message.timestamp);
        // A round the time rule refuses is no game's latest: the scan looks further back.
        if (!admitByTime(round, at).admitted) return;
        // Newest first within a partition: the first admitted round met per game is its latest in
        // log order (a game's rounds share one partition, key = slug); an earlier record of the
        // same id met after it is the one that stands (the first one read wins a conflict).
        const prev = newest.get(round.game_slug);
        if (prev && prev.round.round_id !== round.round_id) return;
        newest.set(round.game_slug, new Delivery(round, at, r.partition, BigInt(r.offset)));
      },
      () => newest.size === GAME_SLUGS.length || scanned >= limit,
      { chunk: BOOTSTRAP_CHUNK, logger: log },
    );
    // Oldest first, so `latest()` of a type ends with the newest round.
    for (const d of [...newest.values()].sort((a, b) => a.appendedAt - b.appendedAt)) admit(d);
    // A phase of a round that finished is dropped by the hook's receiver (the hub).
    for (const p of phases.values()) deps.onLifecycle?.(p.event, p.at, p.partition, p.offset);
    log.info({ games: [...newest.keys()], scanned }, 'latest rounds loaded from the log tail');
    return marks;
  }

  /** Hands the live records of one partition to the hub (rounds) or the lifecycle hook. */
  const handOut = ({ partition, records }: FollowedRecords): void => {
    for (const m of records) {
      const event = decode(m.value, partition, m.offset);
      if (!event || event.type === 'BetCashedOut') continue;
      const at = appendTime(m.timestamp);
      if (event.type === 'RoundFinished') admit(new Delivery(event, at, partition, BigInt(m.offset)));
      else deps.onLifecycle?.(event, at, partition, BigInt(m.offset));
    }
  };

  return {
    topic,
    get ready() {
      return !stopped && (follower?.ready ?? false);
    },
    positions: () => follower?.positions() ?? new Map(),
    async start() {
      const marks = await bootstrap();
      // The topic follower seeks every partition to the next record not yet handed out on every
      // group join (a kafkajs restart after a broker outage included): the group commits nothing.
      const f = createTopicFollower({
        kafka,
        topic,
        groupPrefix: 'edge',
        from: marks,
        maxWaitTimeInMs: FETCH_MAX_WAIT_MS,
        minBytes: 1,
        logger: log,
        onRecords: handOut,
        lag: { registry: metrics.register, name: 'edge-source', refreshMs: deps.config.kafka.lagRefreshMs },
      });
      follower = f;
      await f.start();
      log.info({ topic, marks: Object.fromEntries([...marks].map(([p, o]) => [p, String(o)])) }, 'live');
    },
    async stop() {
      stopped = true;
      await follower?.stop();
    },
  };
}
