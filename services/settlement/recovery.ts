/**
 * Start-up recovery of settlement's outbox. An outbox entry is committed with the bet state that
 * produced it, then appended, then removed when settlement reads it back from wallet-transactions.
 * After a crash an entry may or may not have reached the log; if it did, it sits at or after the
 * checkpoint of its partition (reading it back would have removed the entry in the same statement
 * that moved the checkpoint past it). So: read each partition from its checkpoint to the
 * high-water mark, drop the entries found there, and append only the others. Nothing is appended
 * twice, and nothing decided is lost. Run it before the consumer starts (one instance at a time).
 */
import type { Kafka, Producer } from 'kafkajs';
import { readCheckpoints } from '../../lib/db/checkpoints.ts';
import type { Sql } from '../../lib/db/pool.ts';
import { partitionOffsets, readRange } from '../../lib/log/kafka.ts';
import { decodeWalletEvent } from '../../lib/log/wallet-events.ts';
import type { Logger } from '../../lib/logger.ts';
import { deleteOutbox, readOutbox, SETTLEMENT_PROJECTION } from './store.ts';

/**
 * Re-appends outbox entries that are not in the log yet.
 * @returns how many entries were appended again.
 * @throws database or broker errors (start-up then fails; nothing is lost).
 */
export async function recoverOutbox(deps: {
  sql: Sql;
  kafka: Kafka;
  producer: Producer;
  walletTopic: string;
  log: Logger;
}): Promise<number> {
  const { sql, kafka, producer, walletTopic, log } = deps;
  const rows = await readOutbox(sql);
  if (rows.length === 0) return 0;
  const id = (type: string, txId: number) => `${type}:${txId}`;
  const missing = new Map(rows.map((r) => [id(r.type, r.tx_id), r]));
  const checkpoints = await readCheckpoints(sql, SETTLEMENT_PROJECTION, walletTopic);
  const from = new Map<number, bigint>();
  for (const [p, o] of await partitionOffsets(kafka, walletTopic)) from.set(p, checkpoints.get(p) ?? o.low);
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
  if (resend.length > 0)
    await producer.send({
      topic: walletTopic,
      acks: -1,
      messages: resend.map((r) => ({ key: r.key, value: r.value })),
    });
  log.info({ outbox: rows.length, inLog: found.length, appended: resend.length }, 'outbox recovered');
  return resend.length;
}
