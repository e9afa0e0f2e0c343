/**
 * The in-memory key table every credential-checking process holds (docs/contract.md "Topics", auth-keys):
 * `MemoryKeyTable` is the pure fold of key events; `startKeyTable` feeds one from the compacted
 * `auth-keys` topic, read from the beginning by the topic follower (lib/log/topic-follower.ts: a
 * consumer group unique to the process, nothing committed, a rejoin goes on from the next record
 * not applied), ready once caught up to the high-water marks seen at start, then following live
 * with a 100 ms fetch wait so a revocation is applied within a second.
 */
import type { Kafka } from 'kafkajs';
import type { Registry } from 'prom-client';
import type { SharedConfig } from '../config/shared.ts';
import { UnavailableError } from '../errors.ts';
import { createTopicFollower } from '../log/topic-follower.ts';
import { ensureTopics, topicName } from '../log/topics.ts';
import type { Logger } from '../logger.ts';
import { decodeKeyEvent, type KeyEvent, type LogPosition } from './key-events.ts';
import { loadTokenSecret } from './token-secret.ts';

/** One live (not deleted) key. Times are Unix ms. */
export interface KeyRecord {
  readonly keyId: string;
  readonly name: string;
  readonly kind: 'private' | 'public';
  readonly secretHash: string;
  readonly scopes: readonly string[];
  readonly rateLimit: number;
  readonly allowedOrigins: readonly string[];
  readonly admin: boolean;
  readonly visitorId: string | null;
  readonly boundDomain: string | null;
  readonly createdAtMs: number;
  readonly revokedAtMs: number | null;
}

/** What the verifier needs: lookups plus the token signing secret. */
export interface KeyLookup {
  readonly tokenSecret: Buffer;
  get(keyId: string): KeyRecord | undefined;
  findBySecretHash(hash: string): KeyRecord | undefined;
}

/** Called after a key changed; `record` is undefined once the key is deleted. */
export type KeyListener = (keyId: string, record: KeyRecord | undefined) => void;

/** The fold of key events; no I/O. Unknown key ids in KeyRevoked/KeyDeleted are ignored. */
export class MemoryKeyTable implements KeyLookup {
  private readonly byId = new Map<string, KeyRecord>();
  private readonly byHash = new Map<string, string>();
  private readonly listeners = new Set<KeyListener>();

  constructor(readonly tokenSecret: Buffer) {}

  get(keyId: string): KeyRecord | undefined {
    return this.byId.get(keyId);
  }

  findBySecretHash(hash: string): KeyRecord | undefined {
    const id = this.byHash.get(hash);
    return id === undefined ? undefined : this.byId.get(id);
  }

  /** Every live key (revoked ones included), oldest first. */
  list(): KeyRecord[] {
    return [...this.byId.values()].sort((a, b) => a.createdAtMs - b.createdAtMs);
  }

  /** Whether a non-revoked key with the admin flag exists. */
  hasAdmin(): boolean {
    for (const k of this.byId.values()) if (k.admin && k.revokedAtMs === null) return true;
    return false;
  }

  /** Registers `listener`; returns its removal. */
  onChange(listener: KeyListener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  apply(event: KeyEvent): void {
    const id = event.type === 'tombstone' ? event.keyId : event.value.key_id;
    if (event.type === 'KeyCreated') {
      const v = event.value;
      this.remove(id);
      const rec: KeyRecord = {
        keyId: id,
        name: v.name,
        kind: v.kind,
        secretHash: v.secret_sha256,
        scopes: [...v.scopes],
        rateLimit: v.rate_limit,
        allowedOrigins: [...v.allowed_origins],
        admin: v.admin,
        visitorId: v.visitor_id,
        boundDomain: v.bound_domain,
        createdAtMs: v.created_at,
        revokedAtMs: null,
      };
      this.byId.set(id, rec);
      this.byHash.set(rec.secretHash, id);
    } else if (event.type === 'KeyRevoked') {
      const cur = this.byId.get(id);
      if (!cur) return;
      this.byId.set(id, { ...cur, revokedAtMs: cur.revokedAtMs ?? event.value.at });
    } else if (!this.remove(id)) return;
    for (const l of this.listeners) l(id, this.byId.get(id));
  }

  private remove(id: string): boolean {
    const cur = this.byId.get(id);
    if (!cur) return false;
    this.byId.delete(id);
    if (this.byHash.get(cur.secretHash) === id) this.byHash.delete(cur.secretHash);
    return true;
  }
}

/** A key table kept current from the `auth-keys` topic. */
export interface KeyTable extends KeyLookup {
  list(): KeyRecord[];
  hasAdmin(): boolean;
  onChange(listener: KeyListener): () => void;
  /**
   * Resolves once the record at `pos` (e.g. from appendKeyEvent) has been applied.
   * @throws UnavailableError after `timeoutMs` (default 5000).
   */
  waitFor(pos: LogPosition, timeoutMs?: number): Promise<void>;
  /** Stops following the topic. */
  close(): Promise<void>;
}

/**
 * Creates the topic when missing, starts the consumer and resolves once the table holds every record
 * present at start.
 * @param deps.tokenSecret the signing secret; default loadTokenSecret(config.auth).
 * @param deps.registry where `kafka_consumer_lag{consumer="key-table"}` goes (lib/log/consumer-lag.ts); none: not measured.
 * @throws UnavailableError when catching up takes longer than `readyTimeoutMs` (default 30000).
 */
export async function startKeyTable(deps: {
  config: Pick<SharedConfig, 'kafka' | 'auth'>;
  kafka: Kafka;
  logger: Logger;
  tokenSecret?: Buffer;
  readyTimeoutMs?: number;
  registry?: Registry;
}): Promise<KeyTable> {
  const { config, kafka } = deps;
  const log = deps.logger.child({ component: 'key-table' });
  const topic = topicName(config, 'authKeys');
  const table = new MemoryKeyTable(deps.tokenSecret ?? (await loadTokenSecret(config.auth)));
  const admin = kafka.admin();
  await admin.connect();
  let startHigh: Map<number, bigint>;
  try {
    await ensureTopics(admin, config, ['authKeys']);
    const offsets = await admin.fetchTopicOffsets(topic);
    startHigh = new Map(offsets.filter((o) => o.high !== o.low).map((o) => [o.partition, BigInt(o.high)]));
  } finally {
    await admin.disconnect();
  }
  /** Next offset to apply, per partition. */
  const next = new Map<number, bigint>();
  const waiters = new Set<{ pos: LogPosition; resolve: () => void }>();
  let markReady: () => void = () => {};
  const ready = new Promise<void>((r) => {
    markReady = r;
  });
  const checkReady = () => {
    for (const [p, high] of startHigh) if ((next.get(p) ?? 0n) < high) return;
    markReady();
  };
  checkReady();

  // The topic follower seeks every partition to the next record not yet applied after each group
  // join, so a rejoin (broker outage) neither re-applies the table nor skips a revocation.
  const follower = createTopicFollower({
    kafka,
    topic,
    groupPrefix: 'auth-keys',
    from: 'beginning',
    maxWaitTimeInMs: 100,
    logger: log,
    ...(deps.registry
      ? { lag: { registry: deps.registry, name: 'key-table', refreshMs: config.kafka.lagRefreshMs } }
      : {}),
    onRecords: ({ partition, records }) => {
      for (const m of records) {
        try {
          table.apply(decodeKeyEvent(m.key, m.value));
        } catch (err) {
          log.error({ err, partition, offset: m.offset }, 'skipping undecodable auth-keys record');
        }
        next.set(partition, BigInt(m.offset) + 1n);
      }
      for (const w of waiters) {
        if ((next.get(w.pos.partition) ?? 0n) > w.pos.offset) {
          waiters.delete(w);
          w.resolve();
        }
      }
      checkReady();
    },
  });
  await follower.start();
  const timeout = deps.readyTimeoutMs ?? 30_000;
  let timer: NodeJS.Timeout | undefined;
  try {
    await Promise.race([
      ready,
      new Promise<never>((_, reject) => {
        timer = setTimeout(
          () => reject(new UnavailableError(`key table not caught up after ${timeout} ms`)),
          timeout,
        );
      }),
    ]);
  } catch (err) {
    await follower.stop();
    throw err;
  } finally {
    clearTimeout(timer);
  }
  log.info({ keys: table.list().length }, 'key table ready');

  return {
    tokenSecret: table.tokenSecret,
    get: (id) => table.get(id),
    findBySecretHash: (h) => table.findBySecretHash(h),
    list: () => table.list(),
    hasAdmin: () => table.hasAdmin(),
    onChange: (l) => table.onChange(l),
    waitFor(pos, timeoutMs = 5_000) {
      if ((next.get(pos.partition) ?? 0n) > pos.offset) return Promise.resolve();
      return new Promise<void>((resolve, reject) => {
        const w = {
          pos,
          resolve: () => {
            clearTimeout(t);
            resolve();
          },
        };
        const t = setTimeout(() => {
          waiters.delete(w);
          reject(
            new UnavailableError(`key table did not reach ${pos.partition}:${pos.offset} in ${timeoutMs} ms`),
          );
        }, timeoutMs);
        waiters.add(w);
      });
    },
    async close() {
      await follower.stop();
    },
  };
}
