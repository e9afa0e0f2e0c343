/**
 * The one topic registry (docs/contract.md "Topics"). Every producer and consumer takes its topic name
 * from here; topics are created by `ensureTopics` (scripts/create-topics.ts, service start-up,
 * tests), never by broker auto-create.
 */
import kafkajs, { type Admin, type ITopicConfig } from 'kafkajs';
import pRetry from 'p-retry';

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
   * (settlement's late-bet check).
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
   * API keys as events (docs/contract.md "Topics"); compacted, so the latest event per key id survives and
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
   * Bets and their wallet outcomes: one key per player so a player's events stay in
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
   * Ledger of dead-letter replays (`npm run dead-letters -- replay`): one DeadLetterReplayed
   * per record re-appended, so the same record is not replayed twice by accident.
   */
  deadLetterReplays: {
    base: 'dead-letters.replays',
    key: 'dead-letter topic/partition/offset',
    events: ['DeadLetterReplayed'],
    configEntries: { 'retention.ms': '-1', 'cleanup.policy': 'delete' },
  },
  /** Game access sessions (docs/contract.md "Operator callbacks"): SessionCreated, SessionOpened, SessionExpired, key = session id. */
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
 * Kafka protocol errors (kafkajs' `type`) a cluster answers while one broker's metadata lags the
 * controller's: a topic the controller has just created that this broker has not heard of yet
 * ("This server does not host this topic-partition"), a partition whose leader it does not know,
 * a request sent to a broker that is no longer (or not yet) the controller. Waiting and asking
 * again is the remedy (the Kafka protocol guide marks each retriable).
 */
export const METADATA_LAG_ERRORS: ReadonlySet<string> = new Set([
  'UNKNOWN_TOPIC_OR_PARTITION',
  'LEADER_NOT_AVAILABLE',
  'NOT_LEADER_OR_FOLLOWER',
  'REPLICA_NOT_AVAILABLE',
  'NOT_CONTROLLER',
]);

/**
 * True when `err`, or an error it wraps (kafkajs' `cause` / `originalError`, the members of a
 * KafkaJSAggregateError), is one of METADATA_LAG_ERRORS.
 */
export function isMetadataLag(err: unknown): boolean {
  return hasErrorType(err, METADATA_LAG_ERRORS);
}

/** True when `err`, or an error it wraps (as in isMetadataLag), has a kafkajs `type` in `types`. */
function hasErrorType(err: unknown, types: ReadonlySet<string>): boolean {
  const seen = new Set<unknown>();
  const queue: unknown[] = [err];
  while (queue.length > 0) {
    const e = queue.shift() as
      | { type?: unknown; cause?: unknown; originalError?: unknown; errors?: unknown }
      | undefined;
    if (!e || typeof e !== 'object' || seen.has(e)) continue;
    seen.add(e);
    if (typeof e.type === 'string' && types.has(e.type)) return true;
    queue.push(e.cause, e.originalError, ...(Array.isArray(e.errors) ? e.errors : []));
  }
  return false;
}

const ALREADY_EXISTS: ReadonlySet<string> = new Set(['TOPIC_ALREADY_EXISTS']);

/**
 * How long ensureTopics keeps asking a cluster whose metadata lags (METADATA_LAG_ERRORS): retries
 * 200 ms apart growing to 2 s, for at most 60 s in all; a fresh cluster catches up within seconds.
 */
export const METADATA_LAG_RETRY = {
  retries: 30,
  factor: 2,
  minTimeout: 200,
  maxTimeout: 2000,
  maxRetryTime: 60_000,
} as const;

/** Replication and in-sync minimum of created topics: 3 and 2 from three brokers up, else 1 and 1. */
export function replicationFor(
  brokers: number,
  configured: number | undefined,
): {
  replicationFactor: number;
  minInsyncReplicas: number;
} {
  const replicationFactor = configured ?? (brokers >= 3 ? 3 : 1);
  return { replicationFactor, minInsyncReplicas: replicationFactor >= 3 ? 2 : 1 };
}

/**
 * Creates the given topics when missing, and brings the topic configuration of existing ones to
 * their spec when it differs (e.g. a topic created before it used LogAppendTime; partitions and
 * replication are left as they are). Partitions come from config (TOPIC_PARTITIONS); replication
 * from TOPIC_REPLICATION_FACTOR, or when that is unset from the cluster's broker count at creation
 * (replicationFor: 3 with `min.insync.replicas` 2 on three brokers or more, so one broker may be
 * lost without losing or refusing an acknowledged write; 1 below). Waits for leaders so producers
 * can append right after. A cluster whose brokers' metadata lags the controller (a fresh
 * multi-broker cluster) is asked again (METADATA_LAG_RETRY, at most 60 s).
 * @returns the names that were created.
 * @throws the broker's error when it is not a metadata lag, or still one after 60 s.
 */
export async function ensureTopics(
  admin: Admin,
  config: Pick<SharedConfig, 'kafka'>,
  keys: readonly TopicKey[] = Object.keys(TOPICS) as TopicKey[],
): Promise<string[]> {
  // The topics missing at the first look: a retry after a create whose leader wait failed finds
  // them existing, and they were still created by this call.
  let missing: Set<string> | undefined;
  await pRetry(
    async () => {
      const existing = new Set(await admin.listTopics());
      missing ??= new Set(keys.map((k) => topicName(config, k)).filter((n) => !existing.has(n)));
      const { replicationFactor, minInsyncReplicas } = replicationFor(
        (await admin.describeCluster()).brokers.length,
        config.kafka.replicationFactor,
      );
      const wanted: ITopicConfig[] = keys
        .map((k) => ({ k, name: topicName(config, k) }))
        .filter(({ name }) => !existing.has(name))
        .map(({ k, name }) => ({
          topic: name,
          numPartitions: config.kafka.partitions,
          replicationFactor,
          configEntries: Object.entries(topicEntries(k, minInsyncReplicas)).map(([n, value]) => ({
            name: n,
            value,
          })),
        }));
      const present = keys.map((k) => topicName(config, k)).filter((n) => existing.has(n));
      const insync = await minInsyncOf(admin, present);
      await alignTopicConfigs(
        admin,
        keys
          .map((k) => ({ k, name: topicName(config, k) }))
          .filter(({ name }) => existing.has(name))
          .map(({ k, name }) => ({ name, entries: topicEntries(k, insync.get(name) ?? 1) })),
      );
      if (wanted.length > 0) await admin.createTopics({ topics: wanted, waitForLeaders: true });
      // Every broker must know every partition's leader, not only the one that answered above.
      if (missing.size > 0) await leadersKnown(admin, [...missing]);
    },
    // TOPIC_ALREADY_EXISTS among other answers: a lagging broker listed some topics of an earlier
    // attempt as missing; the next listing has them.
    { ...METADATA_LAG_RETRY, shouldRetry: (err) => isMetadataLag(err) || hasErrorType(err, ALREADY_EXISTS) },
  );
  return [...(missing ?? [])];
}

/** A topic's spec entries, plus `min.insync.replicas` when it is above the broker's default of 1. */
function topicEntries(key: TopicKey, minInsyncReplicas: number): Record<string, string> {
  const entries: Record<string, string> = { ...TOPICS[key].configEntries };
  if (minInsyncReplicas > 1) entries['min.insync.replicas'] = String(minInsyncReplicas);
  return entries;
}

/**
 * The in-sync minimum each existing topic should keep (from its replica count, replicationFor), so
 * aligning the spec's entries does not drop a `min.insync.replicas` set at creation.
 */
async function minInsyncOf(admin: Admin, topics: readonly string[]): Promise<Map<string, number>> {
  if (topics.length === 0) return new Map();
  const { topics: meta } = await admin.fetchTopicMetadata({ topics: [...topics] });
  return new Map(
    meta.map((t) => [
      t.name,
      replicationFor(0, Math.min(...t.partitions.map((p) => p.replicas.length))).minInsyncReplicas,
    ]),
  );
}

/**
 * Reads `topics`' metadata (from any one broker) and throws a LEADER_NOT_AVAILABLE error, which the
 * caller retries, while a partition is missing or without a leader there: createTopics waited for
 * leaders on one broker only.
 */
async function leadersKnown(admin: Admin, topics: readonly string[]): Promise<void> {
  const { topics: meta } = await admin.fetchTopicMetadata({ topics: [...topics] });
  for (const t of meta) {
    if (t.partitions.length === 0 || t.partitions.some((p) => p.leader < 0)) {
      throw Object.assign(new Error(`topic ${t.name}: a partition has no leader yet`), {
        type: 'LEADER_NOT_AVAILABLE',
      });
    }
  }
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
