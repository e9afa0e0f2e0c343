/**
 * Recovery of settlement's outbox. An outbox entry is committed with the bet state that produced
 * it, then appended, then removed when settlement reads it back from wallet-transactions. After a
 * crash (or when another instance takes a partition over) an entry may or may not have reached the
 * log; if it did, it sits at or after the checkpoint of its partition (reading it back would have
 * removed the entry in the same statement that moved the checkpoint past it). So: read each
 * partition from its checkpoint to the high-water mark, drop the entries found there, and append
 * only the others. Nothing is appended twice, and nothing decided is lost.
 *
 * With several instances this runs for the partitions an instance has just claimed (ownership.ts),
 * before it decides anything for them: the claim waited for every append of an older epoch, and
 * any later one is refused by the fence, so the entries read here are no longer anyone else's.
 */
import type { Kafka, Producer } from 'kafkajs';
import { readCheckpoints } from '../../lib/db/checkpoints.ts';
import type { Sql } from '../../lib/db/pool.ts';
import { partitionOffsets, readRange } from '../../lib/log/kafka.ts';
import { decodeWalletEvent } from '../../lib/log/wallet-events.ts';
import type { Logger } from '../../lib/logger.ts';
import { sendFenced } from './ownership.ts';
import { deleteOutbox, readOutbox, SETTLEMENT_PROJECTION } from './store.ts';

/**
 * Re-appends outbox entries that are not in the log yet.
 * @param deps.claimed the wallet partitions just claimed, with their epochs: only their entries
 *   are recovered, and appended through the fence. Without it every entry is, appended as it is
 *   (for a settlement that runs alone).
 * @returns how many entries were appended again.
 * @throws database or broker errors (the caller retries; nothing is lost).
 */
export async function recoverOutbox(deps: {
  sql: Sql;
  kafka: Kafka;
  producer: Producer;
  walletTopic: string;
  log: Logger;
  claimed?: ReadonlyMap<number, bigint>;
}): Promise<number> {
  const { sql, kafka, producer, walletTopic, log, claimed } = deps;
  const rows = await readOutbox(sql, claimed ? [...claimed.keys()] : undefined);
  if (rows.length === 0) return 0;
  const id = (type: string, txId: number) => `${type}:${txId}`;
  const missing = new Map(rows.map((r) => [id(r.type, r.tx_id), r]));
  const checkpoints = await readCheckpoints(sql, SETTLEMENT_PROJECTION, walletTopic);
  const from = new Map<number, bigint>();
  for (const [p, o] of await partitionOffsets(kafka, walletTopic))
    if (!claimed || claimed.has(p)) from.set(p, checkpoints.get(p) ?? o.low);
  await readRange(
    kafka,
    walletTopic,
    from,
    ({ message }) => {
      try {
        const e = decodeWalletEvent(message.value);
        missing.delete(id(e.type, e.value.tx_id));
      } catch {
        // not ours to judge here; the consumer logs undecodable records
      }
    },
    { timeoutMs: 120_000 },
  );
  const found = rows.filter((r) => !missing.has(id(r.type, r.tx_id)));
  await deleteOutbox(sql, found);
  const resend = [...missing.values()];
  let appended = resend.length;
  if (claimed)
    appended = (
      await sendFenced(
        sql,
        producer,
        walletTopic,
        resend.map((r) => ({ ...r, epoch: claimed.get(r.partition) ?? -1n })),
      )
    ).sent.length;
  else if (resend.length > 0)
    await producer.send({
      topic: walletTopic,
      acks: -1,
      messages: resend.map((r) => ({ key: r.key, value: r.value })),
    });
  log.info(
    { outbox: rows.length, inLog: found.length, appended, partitions: claimed ? [...claimed.keys()] : 'all' },
    'outbox recovered',
  );
  return appended;
}
