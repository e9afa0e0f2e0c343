/**
 * Re-drives parked callbacks (issue 5: "parked on a dead-letter topic that a script replays"): the
 * wallet case of the dead-letter replay (services/dead-letters/replay.ts). Every record of
 * `wallet-transactions.dead-letter` that is selected (all, or those whose `tx-id` header or event
 * tx_id is listed) and not yet in the replay ledger is re-appended to `wallet-transactions` with a
 * `replayed-from` header, where the saga picks it up again, and recorded in the ledger, so a record
 * is replayed once (a second replay of the same tx id finds nothing new). WALLET_REPLAY_GROUP's
 * offset is moved over the prefix of replayed records (the saga's parked-backlog metric). A record replayed again
 * (a crash between re-append and ledger write) is harmless: the operator is idempotent on
 * provider_tx_id (it answers the first answer; nothing is credited twice).
 */
import type { Kafka } from 'kafkajs';
import type { Logger } from '../../lib/logger.ts';
import type { DeadLettersConfig } from './config.ts';
import { DeadLetterError } from './errors.ts';
import { replayDeadLetters } from './replay.ts';

export interface ReplayOptions {
  readonly config: Pick<DeadLettersConfig, 'kafka' | 'deadLetters'>;
  readonly kafka: Kafka;
  readonly logger: Logger;
  /** Only these provider_tx_ids; undefined = every parked record. */
  readonly txIds?: readonly number[];
  /** Give up reading after this long, ms (default 60000). */
  readonly timeoutMs?: number;
}

export interface ReplayResult {
  /** Records re-appended by this run. */
  readonly replayed: number;
  /** Selected records left alone: already replayed by an earlier run. */
  readonly skipped: number;
}

/**
 * Replays parked records as described above; a selection that matches nothing replays nothing.
 * @throws DeadLetterError TOPIC_MISSING or BROKER_UNREACHABLE; kafkajs errors while appending.
 */
export async function replayParked(opts: ReplayOptions): Promise<ReplayResult> {
  try {
    const r = await replayDeadLetters({
      config: opts.config,
      kafka: opts.kafka,
      logger: opts.logger,
      topic: 'wallet',
      selection: opts.txIds ? { txIds: opts.txIds } : { all: true },
      ...(opts.timeoutMs === undefined ? {} : { timeoutMs: opts.timeoutMs }),
    });
    return { replayed: r.replayed.length, skipped: r.alreadyReplayed.length + r.undecodable.length };
  } catch (err) {
    if (err instanceof DeadLetterError && err.code === 'NOTHING_MATCHES') return { replayed: 0, skipped: 0 };
    throw err;
  }
}
