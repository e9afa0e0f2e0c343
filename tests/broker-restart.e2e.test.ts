/**
 * The round engine survives a broker restart without losing or duplicating a round: a PRIVATE Kafka (tests/support/private-infra.ts, never the shared one) is stopped with
 * `kafka.sh stop` for a few seconds while the engine appends, then started again; afterwards every
 * game's sequence in the log is consecutive and unique, and the hash chain links from each round
 * to the previous one. (A SIGKILLed broker under the whole platform: tests/drills/broker.e2e.test.ts.)
 */
import { createHash } from 'node:crypto';
import type { Kafka } from 'kafkajs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createKafka, partitionOffsets, readRange } from '../lib/log/kafka.ts';
import { decodeRoundEvent } from '../lib/log/rounds-codec.ts';
import { ensureTopics, topicName } from '../lib/log/topics.ts';
import { createLogger } from '../lib/logger.ts';
import type { RoundEvent, RoundFinished } from '../rules/rounds/round.ts';
import { type Config, loadConfig } from './support/config.ts';
import { waitFor } from './support/poll.ts';
import { type PrivateKafka, startPrivateKafka } from './support/private-infra.ts';
import { type Service, startService, uniqueId } from './support/processes.ts';

const ns = uniqueId('e2e-restart-');
let broker: PrivateKafka | undefined;
let config: Config;
let kafka: Kafka;
let topic: string;
let engine: Service | undefined;

async function appended(): Promise<number> {
  const offsets = await partitionOffsets(kafka, topic);
  return [...offsets.values()].reduce((n, o) => n + Number(o.high - o.low), 0);
}

beforeAll(async () => {
  broker = await startPrivateKafka();
  config = loadConfig({ ...process.env, KAFKA_BROKERS: broker.brokers }, { TOPIC_NAMESPACE: `${ns}-` });
  kafka = createKafka(config, 'broker-restart-e2e', createLogger('test', 'silent'));
  topic = topicName(config, 'rounds');
}, 120_000);

afterAll(async () => {
  await engine?.stop('SIGKILL');
  await broker?.close(); // the topics go with the broker's folder
}, 120_000);

describe('round engine across a broker restart', () => {
  it('loses and duplicates no round', async () => {
    const admin = kafka.admin();
    await admin.connect();
    await ensureTopics(admin, config);
    await admin.disconnect();
    engine = startService('services/round-engine/main.ts', {
      KAFKA_BROKERS: (broker as PrivateKafka).brokers,
      TOPIC_NAMESPACE: `${ns}-`,
      ROUND_SPEED: '60',
      ROUND_CHAIN_LENGTH: '500',
      ROUND_SERVER_SEED: 'cd'.repeat(32),
      ROUND_ENGINE_PORT: '0',
    });
    await waitFor(
      '20 rounds before the restart',
      async () => ((await appended()) >= 20 ? true : undefined),
      60_000,
      250,
    );

    await (broker as PrivateKafka).stop();
    await new Promise((r) => setTimeout(r, 5_000));
    await (broker as PrivateKafka).start();
    const after = await appended();
    await waitFor(
      '20 more rounds after the restart',
      async () => ((await appended()) >= after + 20 ? true : undefined),
      90_000,
      250,
    );
    expect(await engine.stop('SIGTERM')).toBe(0);

    const offsets = await partitionOffsets(kafka, topic);
    const events: RoundEvent[] = [];
    await readRange(kafka, topic, new Map([...offsets].map(([p, o]) => [p, o.low])), (r) => {
      events.push(decodeRoundEvent(r.message.value));
    });
    expect(events.length).toBe(await appended()); // every record decodes
    // Each round's lifecycle events are in the log once, like the round itself.
    for (const type of ['RoundOpened', 'BettingClosed'] as const) {
      const keys = events.filter((e) => e.type === type).map((e) => `${e.game_slug}:${e.round_id}`);
      expect(new Set(keys).size).toBe(keys.length);
    }
    const rounds = events.filter((e): e is RoundFinished => e.type === 'RoundFinished');
    const byGame = new Map<string, RoundFinished[]>();
    for (const r of rounds) byGame.set(r.game_slug, [...(byGame.get(r.game_slug) ?? []), r]);
    expect([...byGame.keys()].sort()).toEqual(['crash', 'double', 'slot', 'wall-street']);
    for (const [, list] of byGame) {
      const seqs = list.map((r) => r.round_id % 1e12);
      expect(seqs).toEqual(seqs.map((_, i) => i + 1)); // consecutive from 1, none twice, in log order
      for (let i = 1; i < list.length; i++) {
        const prev = list[i - 1]?.proof;
        const cur = list[i]?.proof;
        if (prev && cur && prev.chain_epoch === cur.chain_epoch) {
          expect(createHash('sha256').update(Buffer.from(cur.hash, 'hex')).digest('hex')).toBe(prev.hash);
        }
      }
    }
  }, 300_000);
});
