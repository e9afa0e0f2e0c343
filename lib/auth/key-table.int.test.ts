/**
 * The key table on the real broker: replay at start (ready = caught up), live following with a
 * revocation seen by another table within one second, and deletion with its tombstone; a rejoin
 * of the table's consumer group re-applies nothing.
 */
import { randomBytes } from 'node:crypto';
import { AssignerProtocol, type Kafka, type Producer } from 'kafkajs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Config, loadConfig } from '../../tests/support/config.ts';
import { waitFor } from '../../tests/support/poll.ts';
import { createKafka } from '../log/kafka.ts';
import { topicName } from '../log/topics.ts';
import { createLogger } from '../logger.ts';
import { newKeyId, newSecret, secretHash } from './credentials.ts';
import { appendKeyEvent, type KeyCreated } from './key-events.ts';
import { type KeyTable, startKeyTable } from './key-table.ts';
import { authenticate } from './verifier.ts';

let config: Config;
let kafka: Kafka;
let producer: Producer;
const tables: KeyTable[] = [];
const logger = createLogger('test', 'silent');

beforeAll(async () => {
  const id = randomBytes(4).toString('hex');
  config = loadConfig(process.env, {
    TOPIC_NAMESPACE: `t-keys-${id}-`,
    TOPIC_PARTITIONS: 2,
    AUTH_TOKEN_SECRET: randomBytes(32).toString('hex'),
  });
  kafka = createKafka(config, `test-keys-${id}`, createLogger('test', 'error'));
  producer = kafka.producer({ idempotent: true, maxInFlightRequests: 1 });
  await producer.connect();
});
afterAll(async () => {
  for (const t of tables) await t.close();
  await producer?.disconnect();
  const admin = kafka.admin();
  await admin.connect();
  await admin.deleteTopics({ topics: [topicName(config, 'authKeys')] }).catch(() => {});
  await admin.disconnect();
});

/** Ids of the consumer groups of key tables reading this file's auth-keys topic. */
async function authKeyGroups(): Promise<Set<string>> {
  const admin = kafka.admin();
  await admin.connect();
  try {
    const ids = (await admin.listGroups()).groups
      .map((g) => g.groupId)
      .filter((g) => g.startsWith('auth-keys-'));
    const { groups } = await admin.describeGroups(ids);
    const topic = topicName(config, 'authKeys');
    return new Set(
      groups
        .filter((g) =>
          g.members.some((m) =>
            AssignerProtocol.MemberMetadata.decode(m.memberMetadata)?.topics.includes(topic),
          ),
        )
        .map((g) => g.groupId),
    );
  } finally {
    await admin.disconnect();
  }
}

/** Resolves once `groupId` is Stable with `members` members. */
async function stableWith(groupId: string, members: number): Promise<void> {
  const admin = kafka.admin();
  await admin.connect();
  try {
    await waitFor(
      `group ${groupId} stable with ${members} members`,
      async () => {
        const [g] = (await admin.describeGroups([groupId])).groups;
        return g?.state === 'Stable' && g.members.length === members ? true : undefined;
      },
      60_000,
    );
  } finally {
    await admin.disconnect();
  }
}

async function table(): Promise<KeyTable> {
  const t = await startKeyTable({ config, kafka, logger });
  tables.push(t);
  return t;
}

function created(secret: string, over: Partial<KeyCreated> = {}): KeyCreated {
  return {
    key_id: newKeyId(),
    name: 'k',
    kind: 'private',
    secret_sha256: secretHash(secret),
    scopes: ['read:games'],
    rate_limit: 1000,
    allowed_origins: [],
    admin: false,
    visitor_id: null,
    bound_domain: null,
    created_at: Date.now(),
    ...over,
  };
}

describe('key table on auth-keys', () => {
  it('replays existing keys before it is ready and follows revocation and deletion live', async () => {
    const secret = newSecret('private');
    const ev = created(secret);
    const writer = await table();
    await writer.waitFor(await appendKeyEvent(producer, config, { type: 'KeyCreated', value: ev }));

    const other = await table();
    expect(other.get(ev.key_id)?.name).toBe('k');
    expect(authenticate(other, { credential: secret, now: Date.now() }).ok).toBe(true);

    await appendKeyEvent(producer, config, {
      type: 'KeyRevoked',
      value: { key_id: ev.key_id, at: Date.now() },
    });
    const t0 = Date.now(); // within a second of the revocation being on the log
    while (authenticate(other, { credential: secret, now: Date.now() }).ok && Date.now() - t0 < 5000) {
      await new Promise((r) => setTimeout(r, 10));
    }
    expect(authenticate(other, { credential: secret, now: Date.now() })).toMatchObject({ reason: 'revoked' });
    expect(Date.now() - t0).toBeLessThan(1000);

    const gone: string[] = [];
    other.onChange((id, rec) => {
      if (!rec) gone.push(id);
    });
    await other.waitFor(
      await appendKeyEvent(producer, config, {
        type: 'KeyDeleted',
        value: { key_id: ev.key_id, at: Date.now() },
      }),
    );
    expect(other.get(ev.key_id)).toBeUndefined();
    expect(gone).toContain(ev.key_id);

    // A process started after the tombstone does not see the key either.
    const late = await table();
    expect(late.get(ev.key_id)).toBeUndefined();
    expect(authenticate(late, { credential: secret, now: Date.now() })).toMatchObject({ reason: 'unknown' });
  });

  it('applies no record twice when its consumer group rejoins', async () => {
    const before = await authKeyGroups();
    const keys: KeyCreated[] = [];
    for (let i = 0; i < 6; i++) {
      const ev = created(newSecret('private'));
      keys.push(ev);
      await appendKeyEvent(producer, config, { type: 'KeyCreated', value: ev });
    }
    const t = await table();
    const changed: string[] = [];
    t.onChange((id) => changed.push(id));
    const [groupId] = [...(await authKeyGroups())].filter((g) => !before.has(g));
    expect(groupId).toBeDefined();
    // A second member joining the table's own group, then leaving: two rejoins of the table.
    const intruder = kafka.consumer({ groupId: groupId as string, maxWaitTimeInMs: 50 });
    await intruder.connect();
    await intruder.subscribe({ topic: topicName(config, 'authKeys'), fromBeginning: false });
    await intruder.run({ autoCommit: false, eachBatch: async () => {} });
    await stableWith(groupId as string, 2);
    await intruder.disconnect();
    await stableWith(groupId as string, 1);
    const last = created(newSecret('private'));
    await t.waitFor(await appendKeyEvent(producer, config, { type: 'KeyCreated', value: last }));
    for (const k of keys) expect(t.get(k.key_id)?.keyId).toBe(k.key_id);
    // Only the key created after the rejoins changed the table; the earlier ones were not re-applied.
    expect(changed).toEqual([last.key_id]);
  }, 120_000);

  it('times out a wait for an offset that is never written', async () => {
    const t = await table();
    await expect(t.waitFor({ partition: 0, offset: 1_000_000n }, 200)).rejects.toThrow(/did not reach/);
  });
});
