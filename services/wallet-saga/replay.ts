/**
 * Re-drives parked callbacks (issue 5: "parked on a dead-letter topic that a script replays"):
 * reads `wallet-transactions.dead-letter` from its consumer group's committed offset up to the
 * high-water mark at start, re-appends each selected record (same key, same bytes) to
 * `wallet-transactions`, where the saga picks it up again, and commits each replayed record's
 * offset so a record is replayed once.
 *
 * Selecting by tx id: a record matches when its `tx-id` header (the parked callback's
 * provider_tx_id) or the event's own tx_id is listed. The group's offset only moves over a prefix
 * of records that were all replayed (a consumer-group offset cannot skip a hole), so a record
 * replayed by id may be re-sent by a later full replay; that is harmless because the operator is
 * idempotent on provider_tx_id (it answers the first answer; nothing is credited twice).
 */
import type { Kafka } from 'kafkajs';
import type { Config } from '../../lib/config.ts';
import type { Logger } from '../../lib/logger.ts';
import { topicName } from '../../lib/topics.ts';
import { decodeWalletEvent } from '../../lib/wallet/events.ts';

export interface ReplayOptions {
  readonly config: Pick<Config, 'kafka' | 'walletSaga'>;
  readonly kafka: Kafka;
  readonly logger: Logger;
  /** Only these provider_tx_ids; undefined = every parked record. */
  readonly txIds?: readonly number[];
  /** Give up after this long, ms (default 60000). */
  readonly timeoutMs?: number;
}

export interface ReplayResult {
  readonly replayed: number;
  readonly skipped: number;
}

function matches(txIds: ReadonlySet<number>, header: string | undefined, value: Buffer | null): boolean {
  if (header !== undefined && txIds.has(Number(header))) return true;
  try {
    return txIds.has(decodeWalletEvent(value).value.tx_id);
  } catch {
    return false;
  }
}

/**
 * Replays parked records as described above.
 * @throws Error on timeout; kafkajs errors when the broker cannot be reached.
 */
export async function replayParked(opts: ReplayOptions): Promise<ReplayResult> {
  const { config, kafka } = opts;
  const dlq = topicName(config, 'walletDeadLetter');
  const target = topicName(config, 'walletTransactions');
  const groupId = config.walletSaga.replayGroup;
  const filter = opts.txIds ? new Set(opts.txIds) : null;
  const admin = kafka.admin();
  await admin.connect();
  const pending = new Map<number, bigint>();
  try {
    const high = await admin.fetchTopicOffsets(dlq);
    const committed = await admin.fetchOffsets({ groupId, topics: [dlq] });
    const from = new Map(committed[0]?.partitions.map((p) => [p.partition, BigInt(p.offset)]) ?? []);
    for (const o of high) {
      const start = (from.get(o.partition) ?? -1n) < 0n ? BigInt(o.low) : (from.get(o.partition) as bigint);
      if (start < BigInt(o.high)) pending.set(o.partition, BigInt(o.high));
    }
  } finally {
    await admin.disconnect();
  }
  if (pending.size === 0) return { replayed: 0, skipped: 0 };

  const producer = kafka.producer({ idempotent: true, maxInFlightRequests: 1 });
  const consumer = kafka.consumer({ groupId, maxWaitTimeInMs: 100 });
  let replayed = 0;
  let skipped = 0;
  const holes = new Set<number>();
  await producer.connect();
  await consumer.connect();
  try {
    await consumer.subscribe({ topic: dlq, fromBeginning: true });
    await new Promise<void>((resolve, reject) => {
      const timeoutMs = opts.timeoutMs ?? 60_000;
      const timer = setTimeout(
        () => reject(new Error(`wallet replay timed out after ${timeoutMs} ms`)),
        timeoutMs,
      );
      consumer
        .run({
          autoCommit: false,
          eachMessage: async ({ partition, message }) => {
            const end = pending.get(partition);
            const off = BigInt(message.offset);
            if (end === undefined || off >= end) return;
            const header = message.headers?.['tx-id']?.toString();
            if (filter === null || matches(filter, header, message.value)) {
              await producer.send({
                topic: target,
                acks: -1,
                messages: [
                  {
                    key: message.key,
                    value: message.value,
                    headers: { 'replayed-from': `${dlq}/${partition}/${message.offset}` },
                  },
                ],
              });
              replayed++;
              opts.logger.info({ partition, offset: message.offset, txId: header }, 'parked record replayed');
              if (!holes.has(partition))
                await consumer.commitOffsets([{ topic: dlq, partition, offset: String(off + 1n) }]);
            } else {
              skipped++;
              holes.add(partition);
            }
            if (off + 1n >= end) pending.delete(partition);
            if (pending.size === 0) {
              clearTimeout(timer);
              resolve();
            }
          },
        })
        .catch(reject);
    });
  } finally {
    await consumer.disconnect();
    await producer.disconnect();
  }
  return { replayed, skipped };
}
