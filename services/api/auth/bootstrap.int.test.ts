/**
 * The first admin key on a real broker: generated and printed once when the key table holds no
 * admin key, then found present; AUTH_ADMIN_KEY registered once and found on the next start.
 */
import { randomBytes } from 'node:crypto';
import type { Kafka, Producer } from 'kafkajs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type KeyTable, startKeyTable } from '../../../lib/auth/key-table.ts';
import { authenticate } from '../../../lib/auth/verifier.ts';
import { createKafka } from '../../../lib/log/kafka.ts';
import { topicName } from '../../../lib/log/topics.ts';
import { createLogger } from '../../../lib/logger.ts';
import { type Config, loadConfig } from '../../../tests/support/config.ts';
import { ensureAdminKey } from './bootstrap.ts';

const logger = createLogger('test', 'silent');
const tables: KeyTable[] = [];
const namespaces: Config[] = [];
let kafka: Kafka;
let producer: Producer;

function freshConfig(over: Record<string, string> = {}): Config {
  const c = loadConfig(process.env, {
    TOPIC_NAMESPACE: `t-boot-${randomBytes(4).toString('hex')}-`,
    TOPIC_PARTITIONS: 1,
    AUTH_TOKEN_SECRET: randomBytes(32).toString('hex'),
    ...over,
  });
  namespaces.push(c);
  return c;
}

async function table(config: Config): Promise<KeyTable> {
  const t = await startKeyTable({ config, kafka, logger });
  tables.push(t);
  return t;
}

beforeAll(async () => {
  kafka = createKafka(loadConfig(process.env), 'test-bootstrap', createLogger('test', 'error'));
  producer = kafka.producer({ idempotent: true, maxInFlightRequests: 1 });
  await producer.connect();
});
afterAll(async () => {
  for (const t of tables) await t.close();
  await producer?.disconnect();
  const admin = kafka.admin();
  await admin.connect();
  await admin.deleteTopics({ topics: namespaces.map((c) => topicName(c, 'authKeys')) }).catch(() => {});
  await admin.disconnect();
});

describe('first admin key', () => {
  it('is generated and printed once when none exists', async () => {
    const config = freshConfig();
    const a = await table(config);
    const printed: string[] = [];
    const print = (l: string) => printed.push(l);
    expect(await ensureAdminKey({ config, table: a, producer, now: Date.now(), print })).toBe('generated');
    expect(await ensureAdminKey({ config, table: a, producer, now: Date.now(), print })).toBe('present');
    expect(printed).toHaveLength(1);
    const secret = /sk_live_[0-9a-f]{64}/.exec(printed[0] ?? '')?.[0];
    expect(authenticate(a, { credential: secret, now: Date.now(), scope: 'admin' }).ok).toBe(true);
    // Another process starting later finds it too and prints nothing.
    const b = await table(config);
    expect(await ensureAdminKey({ config, table: b, producer, now: Date.now(), print })).toBe('present');
    expect(printed).toHaveLength(1);
  });

  it('registers AUTH_ADMIN_KEY once and prints nothing', async () => {
    const adminKey = `sk_live_${randomBytes(32).toString('hex')}`;
    const config = freshConfig({ AUTH_ADMIN_KEY: adminKey });
    const printed: string[] = [];
    const print = (l: string) => printed.push(l);
    const a = await table(config);
    expect(await ensureAdminKey({ config, table: a, producer, now: Date.now(), print })).toBe(
      'configured-registered',
    );
    const b = await table(config);
    expect(await ensureAdminKey({ config, table: b, producer, now: Date.now(), print })).toBe(
      'configured-existing',
    );
    expect(authenticate(b, { credential: adminKey, now: Date.now(), scope: 'admin' }).ok).toBe(true);
    expect(printed).toEqual([]);
  });
});
