/**
 * Helpers of the edge integration tests: a unique topic namespace on the real broker, a producer
 * appending RoundFinished records, and an in-process edge on free ports. Everything opened is
 * closed by `close()`.
 */

import { randomBytes, randomUUID } from 'node:crypto';
import type { Kafka, Producer } from 'kafkajs';
import { appendKeyEvent, type KeyEvent } from '../../lib/auth/key-events.ts';
import { createKafka } from '../../lib/log/kafka.ts';
import { encodeRound, encodeRoundEvent } from '../../lib/log/rounds-codec.ts';
import { ensureTopics, topicName } from '../../lib/log/topics.ts';
import { createLogger } from '../../lib/logger.ts';
import type { GameSlug } from '../../rules/games/catalog.ts';
import type { RoundEvent, RoundFinished } from '../../rules/rounds/round.ts';
import { buildEdge, type Edge, type Transport } from '../../services/edge/edge.ts';
import { type Config, loadConfig } from './config.ts';
import { until } from './poll.ts';
import { syntheticRound } from './rounds-fixture.ts';

const GAME_INDEX: Record<GameSlug, number> = { crash: 0, double: 1, slot: 2, 'wall-street': 3 };

/** A valid round of `slug` with sequence `seq`; `pad` makes a slot round about that many bytes larger. */
export function round(slug: GameSlug, seq: number, pad = 0): RoundFinished {
  const r = syntheticRound(GAME_INDEX[slug], seq, Date.now());
  if (pad > 0 && r.result.game === 'slot') return { ...r, result: { ...r.result, reels: ['x'.repeat(pad)] } };
  return r;
}

export interface TestLog {
  readonly config: Config;
  readonly kafka: Kafka;
  readonly topic: string;
  /** Appends rounds in order (key = game slug, as the engine does). */
  append(rounds: readonly RoundFinished[]): Promise<void>;
  /** Appends any events of `rounds` in order (lifecycle events too), keyed by game slug. */
  appendEvents(events: readonly RoundEvent[]): Promise<void>;
  /** Appends a record that is not a decodable round. */
  appendGarbage(): Promise<void>;
  /** The token signing secret of this namespace's config (AUTH_TOKEN_SECRET). */
  readonly tokenSecret: Buffer;
  /** Appends a key event to this namespace's `auth-keys` topic. */
  appendKey(event: Exclude<KeyEvent, { type: 'tombstone' }>): Promise<void>;
  close(): Promise<void>;
}

/** A fresh namespace with its `rounds` topic; `overrides` go to loadConfig. */
export async function createTestLog(overrides: Record<string, string | number> = {}): Promise<TestLog> {
  const config = loadConfig(process.env, {
    TOPIC_NAMESPACE: `t-${randomUUID().slice(0, 8)}-`,
    EDGE_HTTP_PORT: 0,
    EDGE_WS_PORT: 0,
    GRPC_PORT: 0,
    LOG_LEVEL: 'silent',
    AUTH_TOKEN_SECRET: randomBytes(32).toString('hex'),
    // The credential tests send many bad credentials from 127.0.0.1 on purpose; the failed-credential
    // budget has tests of its own (services/edge/auth.int.test.ts), which set it low.
    RATE_LIMIT_AUTH_FAILURES: 1_000_000,
    ...overrides,
  });
  const kafka = createKafka(config, 'edge-test', createLogger('edge-test', 'silent'));
  const admin = kafka.admin();
  await admin.connect();
  await ensureTopics(admin, config, ['rounds', 'authKeys']);
  const topic = topicName(config, 'rounds');
  const producer: Producer = kafka.producer({ allowAutoTopicCreation: false });
  await producer.connect();
  return {
    config,
    kafka,
    topic,
    async append(rounds) {
      await producer.send({
        topic,
        acks: -1,
        messages: rounds.map((r) => ({ key: r.game_slug, value: encodeRound(r) })),
      });
    },
    async appendEvents(events) {
      await producer.send({
        topic,
        acks: -1,
        messages: events.map((e) => ({ key: e.game_slug, value: encodeRoundEvent(e) })),
      });
    },
    async appendGarbage() {
      await producer.send({ topic, messages: [{ key: 'crash', value: Buffer.from('not avro') }] });
    },
    tokenSecret: Buffer.from(config.auth.tokenSecret, 'hex'),
    async appendKey(event) {
      await appendKeyEvent(producer, config, event);
    },
    async close() {
      await producer.disconnect();
      await admin.deleteTopics({ topics: [topic, topicName(config, 'authKeys')] }).catch(() => {});
      await admin.disconnect();
    },
  };
}

/** An edge on `log`'s namespace, started, on free ports; `auth` overrides the credential switches. */
export async function startEdge(
  log: TestLog,
  transports?: readonly Transport[],
  auth: Partial<Config['auth']> = {},
): Promise<Edge> {
  const edge = buildEdge({
    config: { ...log.config, auth: { ...log.config.auth, ...auth } },
    logger: createLogger('edge-test', log.config.process.logLevel),
    ...(transports ? { transports } : {}),
  });
  await edge.start();
  await until(() => edge.source.ready, 20_000, 'edge source ready');
  return edge;
}

/** Resolves once `edge`'s key table holds `keyId` in the state `want`. */
export async function untilKey(edge: Edge, keyId: string, want: 'live' | 'revoked' | 'gone'): Promise<void> {
  const state = () => {
    const k = edge.keyTable?.get(keyId);
    return k === undefined ? 'gone' : k.revokedAtMs === null ? 'live' : 'revoked';
  };
  await until(() => state() === want, 5_000, `key ${keyId} ${want}`);
}

/** A metric's value from the edge's registry (0 when the label set has no sample yet). */
export async function metricValue(
  edge: Edge,
  name: string,
  labels: Record<string, string> = {},
): Promise<number> {
  const m = await edge.metrics.register.getSingleMetric(name)?.get();
  const v = m?.values.find((s) => Object.entries(labels).every(([k, val]) => s.labels[k] === val));
  return v?.value ?? 0;
}
