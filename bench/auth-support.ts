/**
 * Shared set-up of the access-control benchmarks: a unique topic namespace
 * with its `rounds` and `auth-keys` topics on the real broker, a fixed token signing secret (given
 * to the child processes as AUTH_TOKEN_SECRET so tokens minted here verify there), key appends,
 * and a cleanup that deletes every topic of the namespace (including any a service created).
 */
import { randomBytes } from 'node:crypto';
import type { Admin, Producer } from 'kafkajs';
import { appendKeyEvent, type KeyCreated } from '../lib/auth/key-events.ts';
import { createKafka } from '../lib/log/kafka.ts';
import { ensureTopics } from '../lib/log/topics.ts';
import { createLogger } from '../lib/logger.ts';
import { type Config, loadConfig } from '../tests/support/config.ts';
import { uniqueId } from '../tests/support/processes.ts';

export interface BenchNamespace {
  readonly config: Config;
  /** TOPIC_NAMESPACE and AUTH_TOKEN_SECRET, to pass to child processes. */
  readonly env: Record<string, string>;
  readonly tokenSecret: Buffer;
  /** Appends a KeyCreated to this namespace's `auth-keys` topic (acks from all replicas). */
  addKey(event: KeyCreated): Promise<void>;
  /** Deletes every topic whose name starts with the namespace, then disconnects. */
  close(): Promise<void>;
}

/** Creates `rounds` and `auth-keys` under a fresh namespace `<prefix><random>-`. */
export async function benchNamespace(prefix: string): Promise<BenchNamespace> {
  const tokenSecretHex = randomBytes(32).toString('hex');
  const config = loadConfig(process.env, {
    TOPIC_NAMESPACE: `${uniqueId(prefix)}-`,
    AUTH_TOKEN_SECRET: tokenSecretHex,
    LOG_LEVEL: 'warn',
  });
  const kafka = createKafka(config, 'bench-auth', createLogger('bench-auth', 'warn'));
  const admin: Admin = kafka.admin();
  await admin.connect();
  await ensureTopics(admin, config, ['rounds', 'authKeys']);
  const producer: Producer = kafka.producer({ allowAutoTopicCreation: false });
  await producer.connect();
  const ns = config.kafka.topicNamespace;
  return {
    config,
    env: { TOPIC_NAMESPACE: ns, AUTH_TOKEN_SECRET: tokenSecretHex },
    tokenSecret: Buffer.from(tokenSecretHex, 'hex'),
    async addKey(event) {
      await appendKeyEvent(producer, config, { type: 'KeyCreated', value: event });
    },
    async close() {
      await producer.disconnect();
      const topics = (await admin.listTopics()).filter((t) => t.startsWith(ns));
      if (topics.length > 0) await admin.deleteTopics({ topics });
      await admin.disconnect();
    },
  };
}

/** The change of `on` against `off` as a signed percentage, e.g. "-3.0 %". */
export function pct(on: number, off: number): string {
  return `${(((on - off) / off) * 100).toFixed(1)} %`;
}
