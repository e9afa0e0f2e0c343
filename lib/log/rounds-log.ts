/**
 * Reading the `rounds` topic from its end backwards: how the round engine recovers each game's
 * position, and how an edge finds the latest round of each game at start.
 */
import type { Kafka } from 'kafkajs';
import type { RoundEvent } from '../../rules/rounds/round.ts';
import type { Logger } from '../logger.ts';
import { type LogRecord, partitionOffsets, readRange } from './kafka.ts';
import { decodeRoundEvent } from './rounds-codec.ts';

export interface ScanOptions {
  /** Records per partition read in one step (default 1000). */
  readonly chunk?: number;
  /** Per readRange call, ms (default 60000). */
  readonly timeoutMs?: number;
  readonly logger?: Logger;
}

/**
 * Visits the decodable events (rounds and their lifecycle) of `topic` newest first within each partition, one chunk of
 * `chunk` records per partition at a time, until `isDone()` holds after a chunk or every
 * partition is read down to its low offset. Undecodable records are skipped with a warning (the
 * projector dead-letters them).
 * @throws what readRange throws (broker unreachable, timeout).
 */
export async function scanBackward(
  kafka: Kafka,
  topic: string,
  onEvent: (event: RoundEvent, record: LogRecord) => void,
  isDone: () => boolean,
  options: ScanOptions = {},
): Promise<void> {
  const chunk = BigInt(options.chunk ?? 1000);
  const cursor = new Map<number, { low: bigint; at: bigint }>();
  for (const [p, o] of await partitionOffsets(kafka, topic)) cursor.set(p, { low: o.low, at: o.high });
  while (!isDone()) {
    const from = new Map<number, bigint>();
    const to = new Map<number, bigint>();
    for (const [p, c] of cursor) {
      if (c.at <= c.low) continue;
      from.set(p, c.at - chunk > c.low ? c.at - chunk : c.low);
      to.set(p, c.at);
    }
    if (from.size === 0) return;
    const got = new Map<number, LogRecord[]>();
    await readRange(
      kafka,
      topic,
      from,
      (r) => {
        const list = got.get(r.partition);
        if (list) list.push(r);
        else got.set(r.partition, [r]);
      },
      { to, ...(options.timeoutMs ? { timeoutMs: options.timeoutMs } : {}) },
    );
    for (const [p, start] of from) {
      for (const r of (got.get(p) ?? []).reverse()) {
        let event: RoundEvent;
        try {
          event = decodeRoundEvent(r.message.value);
        } catch (err) {
          options.logger?.warn({ partition: p, offset: r.offset, err }, 'skipping undecodable record');
          continue;
        }
        onEvent(event, r);
      }
      (cursor.get(p) as { at: bigint }).at = start;
    }
  }
}
