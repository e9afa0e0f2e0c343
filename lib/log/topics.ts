/**
 * The one topic registry (DESIGN.md "Topics"). Every producer and consumer takes its topic name
 * from here; topics are created by `ensureTopics` (scripts/create-topics.ts, service start-up,
 * tests), never by broker auto-create.
 */
import kafkajs, { type Admin, type ITopicConfig } from 'kafkajs';

// Not a named export of kafkajs's CommonJS build.
const { ConfigResourceTypes } = kafkajs;

import type { SharedConfig } from '../config/shared.ts';

export interface TopicSpec {
  /** Name without the namespace prefix. */
  readonly base: string;
  /** What the record key is; records with one key stay in order on one partition. */
  readonly key: string;
  /** Event types carried. */
  readonly events: readonly string[];
  /** Broker-side topic configuration. */
  readonly configEntries: Readonly<Record<string, string>>;
  /**
   * Where a checkpointed consumer of this topic puts a record it can never write (lib/log/dead-letter.ts);
   * only topics that such consumers read have one.
   */
  readonly deadLetter?: string;
}

export const TOPICS = {
  /**
   * Every round's lifecycle (RoundOpened, BettingClosed, cash-outs, RoundFinished); kept forever
   * because analytics and rebuilds replay it from offset 0. LogAppendTime: the broker stamps every
   * record, so a bet on wallet-transactions and its round's BettingClosed are ordered by one clock
   * (settlement's late-bet check, issue 11).
   */
  rounds: {
    base: 'rounds',
    key: 'game slug',
    events: ['RoundOpened', 'BettingClosed', 'BetCashedOut', 'RoundFinished'],
    configEntries: {
      'retention.ms': '-1',
      'cleanup.policy': 'delete',
      'message.timestamp.type': 'LogAppendTime',
    },
    deadLetter: 'roundsDeadLetter',
  },
  /** Records of `rounds` that a consumer could not decode or write, with the reason in headers (`npm run dead-letters`). */
  roundsDeadLetter: {
    base: 'rounds.dead-letter',
    key: 'original key',
    events: ['(original bytes)'],
    configEntries: { 'retention.ms': String(30 * 24 * 3600 * 1000), 'cleanup.policy': 'delete' },
  },
  /**
   * API keys as events (DESIGN.md "Topics"); compacted, so the latest event per key id survives and
   * a deleted key's tombstone eventually removes it. Every credential-checking process replays it.
   */
  authKeys: {
    base: 'auth-keys',
    key: 'key id',
    events: ['KeyCreated', 'KeyRevoked', 'KeyDeleted', '(tombstone after KeyDeleted)'],
    configEntries: { 'cleanup.policy': 'compact', 'retention.ms': '-1', 'min.compaction.lag.ms': '60000' },
    deadLetter: 'authKeysDeadLetter',
  },
  /** Records of `auth-keys` that the auth-keys projection could not decode or write, with the reason in headers. */
  authKeysDeadLetter: {
    base: 'auth-keys.dead-letter',
    key: 'original key',
    events: ['(original bytes)'],
    configEntries: { 'retention.ms': String(30 * 24 * 3600 * 1000), 'cleanup.policy': 'delete' },
  },
  /**
   * Bets and their wallet outcomes (issue 5): one key per player so a player's events stay in
   * order; the wallet-saga, the settlement processor and the wallet projector consume it.
   */
  walletTransactions: {
    base: 'wallet-transactions',
    key: 'operator_id:user_id',
    events: [
      'BetPlaced',
      'CallbackSucceeded',
      'CallbackFailed',
      'BetRejected',
      'RollbackRequested',
      'BetSettled',
    ],
    // LogAppendTime: see `rounds`.
    configEntries: {
      'retention.ms': '-1',
      'cleanup.policy': 'delete',
      'message.timestamp.type': 'LogAppendTime',
    },
    deadLetter: 'walletDeadLetter',
  },
  /**
   * Callbacks whose retries are used up (parked by the wallet-saga, headers `reason`, `kind`, …) and
   * records a checkpointed consumer could not decode or write (headers `dlq-*`); `npm run dead-letters
   * -- replay wallet` re-drives them.
   */
  walletDeadLetter: {
    base: 'wallet-transactions.dead-letter',
    key: 'operator_id:user_id',
    events: ['(the event whose callback was parked, with reason headers)'],
    configEntries: { 'retention.ms': '-1', 'cleanup.policy': 'delete' },
  },
  /**
   * Ledger of dead-letter replays (`npm run dead-letters -- replay`, issue 6): one DeadLetterReplayed
   * per record re-appended, so the same record is not replayed twice by accident.
   */
  deadLetterReplays: {
    base: 'dead-letters.replays',
    key: 'dead-letter topic/partition/offset',
    events: ['DeadLetterReplayed'],
    configEntries: { 'retention.ms': '-1', 'cleanup.policy': 'delete' },
  },
  /** Game access sessions (seed 001): SessionCreated, SessionOpened, SessionExpired, key = session id. */
  accessSessions: {
    base: 'access-sessions',
    key: 'session id',
    events: ['SessionCreated', 'SessionOpened', 'SessionExpired'],
    configEntries: { 'retention.ms': '-1', 'cleanup.policy': 'delete' },
  },
} as const satisfies Record<string, TopicSpec>;

export type TopicKey = keyof typeof TOPICS;

/**
 * The dead-letter topic of `key`.
 * @throws Error when `key` has none (a consumer of a topic without one is a programming error).
 */
export function deadLetterOf(key: TopicKey): TopicKey {
  const spec: TopicSpec = TOPICS[key];
  if (!spec.deadLetter) throw new Error(`topic ${key} has no dead-letter topic`);
  return spec.deadLetter as TopicKey;
}

/** Full topic name of `key` under the configured namespace (`TOPIC_NAMESPACE` + base). */
export function topicName(config: Pick<SharedConfig, 'kafka'>, key: TopicKey): string {
  return `${config.kafka.topicNamespace}${TOPICS[key].base}`;
}

/**
 * Creates the given topics when missing (partitions and replication from config), and brings the
 * topic configuration of existing ones to their spec when it differs (e.g. a topic created before
 * it used LogAppendTime; partitions and replication are left as they are). Waits for leaders so
 * producers can append right after.
 * @returns the names that were created.
 */
export async function ensureTopics(
  admin: Admin,
  config: Pick<SharedConfig, 'kafka'>,
  keys: readonly TopicKey[] = Object.keys(TOPICS) as TopicKey[],
): Promise<string[]> {
  const existing = new Set(await admin.listTopics());
  const wanted: ITopicConfig[] = keys
    .map((k) => ({ k, name: topicName(config, k) }))
    .filter(({ name }) => !existing.has(name))
    .map(({ k, name }) => ({
      topic: name,
      numPartitions: config.kafka.partitions,
      replicationFactor: config.kafka.replicationFactor,
      configEntries: Object.entries(TOPICS[k].configEntries).map(([n, value]) => ({ name: n, value })),
    }));
  await alignTopicConfigs(
    admin,
    keys
      .map((k) => ({ name: topicName(config, k), entries: TOPICS[k].configEntries }))
      .filter((t) => existing.has(t.name)),
  );
  if (wanted.length === 0) return [];
  await admin.createTopics({ topics: wanted, waitForLeaders: true });
  return wanted.map((t) => t.topic);
}

/**
 * Sets the topic configuration of `topics` to their entries where a value differs. AlterConfigs
 * replaces a topic's whole dynamic configuration, so every entry of the spec is sent together.
 */
async function alignTopicConfigs(
  admin: Admin,
  topics: readonly { name: string; entries: Readonly<Record<string, string>> }[],
): Promise<void> {
  if (topics.length === 0) return;
  const described = await admin.describeConfigs({
    includeSynonyms: false,
    resources: topics.map((t) => ({ type: ConfigResourceTypes.TOPIC, name: t.name })),
  });
  const drifted = topics.filter((t) => {
    const current = described.resources.find((r) => r.resourceName === t.name)?.configEntries ?? [];
    return Object.entries(t.entries).some(
      ([n, v]) => current.find((c) => c.configName === n)?.configValue !== v,
    );
  });
  if (drifted.length === 0) return;
  await admin.alterConfigs({
    validateOnly: false,
    resources: drifted.map((t) => ({
      type: ConfigResourceTypes.TOPIC,
      name: t.name,
      configEntries: Object.entries(t.entries).map(([name, value]) => ({ name, value })),
    })),
  });
}
