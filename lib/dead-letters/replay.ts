/**
 * Selective replay of dead-letter records: the selected records are re-appended to
 * their source topic (same key and value bytes, the original headers without the dead-letter's own,
 * plus `replayed-from: <topic>/<partition>/<offset>`), and each replay is recorded in the ledger
 * topic `dead-letters.replays` (a DeadLetterReplayed keyed `<topic>/<partition>/<offset>`), so a
 * record already replayed is skipped unless forced. A record whose value still does not decode
 * with today's schemas is skipped too (its consumer would only dead-letter it again).
 *
 * At-least-once: a crash between the re-append and the ledger write leaves the record replayable
 * once more. Harmless for the consumers: the rounds projector keeps the first row of a round
 * (`on conflict do nothing`); the wallet projector changes nothing for a replayed event, and the
 * saga's bet processes decide from the bet's state, so an event read twice asks for nothing new.
 */
import type { Kafka } from 'kafkajs';
import type { SharedConfig } from '../config/shared.ts';
import { encode } from '../log/codec.ts';
import { ensureTopics, topicName } from '../log/topics.ts';
import type { Logger } from '../logger.ts';
import { DeadLetterError } from './errors.ts';
import { type DeadLetter, ledgerKey, REPLAYED_SUBJECT, rangeHint, readDeadLetters } from './read.ts';
import { deadLetterTopic } from './topics.ts';

/** Which records to replay: `all`, or any mix of the others (a record must match each one given). */
export interface Selection {
  readonly all?: boolean;
  /** Exact records. */
  readonly offsets?: readonly { readonly partition: number; readonly offset: bigint }[];
  /** provider_tx_id in the `tx-id` header or the event (wallet only). */
  readonly txIds?: readonly number[];
  /** Matched against the reason header. */
  readonly reason?: RegExp;
}

export interface ReplayOptions {
  readonly config: Pick<SharedConfig, 'kafka'>;
  readonly kafka: Kafka;
  readonly logger: Logger;
  /** Dead-letter topic name (topics.ts deadLetterTopic). */
  readonly topic: string;
  readonly selection: Selection;
  /** Report what would be replayed; append nothing. */
  readonly dryRun?: boolean;
  /** Replay records already replayed, or whose value does not decode now, too. */
  readonly force?: boolean;
  /** Reading timeout, ms (60000). */
  readonly timeoutMs?: number;
}

/** A record's place. */
export interface Position {
  readonly partition: number;
  readonly offset: string;
}

export interface ReplayOutcome {
  readonly topic: string;
  readonly target: string;
  readonly dryRun: boolean;
  readonly matched: number;
  /** Replayed (or, dry run, to be replayed), with where each went (null in a dry run). */
  readonly replayed: readonly (Position & { readonly to: Position | null })[];
  readonly alreadyReplayed: readonly (Position & { readonly at: number })[];
  readonly undecodable: readonly (Position & { readonly reason: string })[];
}

/** The selection as text, for the ledger and logs. */
export function describeSelection(s: Selection): string {
  if (s.all) return '--all';
  return [
    ...(s.offsets ?? []).map((o) => `--offset ${o.partition}:${o.offset}`),
    ...(s.txIds ?? []).map((t) => `--tx-id ${t}`),
    ...(s.reason ? [`--reason ${s.reason.source}`] : []),
  ].join(' ');
}

/**
 * Replays the selected records of `opts.topic` as described above.
 * @throws DeadLetterError UNKNOWN_TOPIC, TOPIC_MISSING, BROKER_UNREACHABLE, BAD_SELECTION,
 *   OFFSET_OUT_OF_RANGE or NOTHING_MATCHES, with nothing appended; kafkajs errors while appending.
 */
export async function replayDeadLetters(opts: ReplayOptions): Promise<ReplayOutcome> {
  const dlq = deadLetterTopic(opts.topic);
  const s = opts.selection;
  const given = (s.offsets?.length ?? 0) + (s.txIds?.length ?? 0) + (s.reason ? 1 : 0);
  if (s.all && given > 0)
    throw new DeadLetterError('BAD_SELECTION', '--all and a selection exclude each other');
  if (!s.all && given === 0)
    throw new DeadLetterError('BAD_SELECTION', 'nothing selected: give --all, --offset, --tx-id or --reason');
  if (s.txIds?.length && dlq.name !== 'wallet')
    throw new DeadLetterError(
      'BAD_SELECTION',
      `--tx-id selects wallet events by tx_id; ${dlq.name} records have none`,
    );

  const log = await readDeadLetters(opts.kafka, opts.config, dlq, opts.timeoutMs);
  for (const o of s.offsets ?? []) {
    const r = log.ranges.find((x) => x.partition === o.partition);
    if (!r || o.offset < r.low || o.offset >= r.high)
      throw new DeadLetterError(
        'OFFSET_OUT_OF_RANGE',
        `${log.topic} ${o.partition}:${o.offset} is out of range (${rangeHint(log.ranges, o.partition)})`,
      );
  }
  const matched = log.records.filter(
    (d) =>
      s.all ||
      ((!s.offsets?.length || s.offsets.some((o) => o.partition === d.partition && o.offset === d.offset)) &&
        (!s.txIds?.length || s.txIds.includes(d.info.txId ?? -1)) &&
        (!s.reason || s.reason.test(d.info.reason ?? ''))),
  );
  if (matched.length === 0)
    throw new DeadLetterError('NOTHING_MATCHES', `no record of ${log.topic} matches ${describeSelection(s)}`);

  const pos = (d: DeadLetter): Position => ({ partition: d.partition, offset: String(d.offset) });
  const already: DeadLetter[] = [];
  const undecodable: (Position & { reason: string })[] = [];
  const todo: DeadLetter[] = [];
  for (const d of matched) {
    if (d.replays.length > 0 && !opts.force) {
      already.push(d);
      continue;
    }
    try {
      dlq.decode(d.value);
      todo.push(d);
    } catch (err) {
      if (opts.force) todo.push(d);
      else undecodable.push({ ...pos(d), reason: (err as Error).message });
    }
  }
  const target = topicName(opts.config, dlq.source);
  const outcome = {
    topic: log.topic,
    target,
    dryRun: opts.dryRun === true,
    matched: matched.length,
    alreadyReplayed: already.map((d) => ({ ...pos(d), at: d.replays.at(-1)?.at ?? 0 })),
    undecodable,
  };
  if (opts.dryRun || todo.length === 0)
    return { ...outcome, replayed: todo.map((d) => ({ ...pos(d), to: null })) };

  const ledger = topicName(opts.config, 'deadLetterReplays');
  const admin = opts.kafka.admin();
  await admin.connect();
  await ensureTopics(admin, opts.config, ['deadLetterReplays']).finally(() => admin.disconnect());
  const producer = opts.kafka.producer({ idempotent: true, maxInFlightRequests: 1 });
  await producer.connect();
  const replayed: (Position & { to: Position })[] = [];
  try {
    for (const d of todo) {
      const headers = Object.fromEntries(
        Object.entries(d.headers).filter(([k]) => !dlq.ownHeaders.includes(k)),
      );
      const [meta] = await producer.send({
        topic: target,
        acks: -1,
        messages: [
          {
            key: d.key,
            value: d.value,
            headers: { ...headers, 'replayed-from': ledgerKey(log.topic, d.partition, d.offset) },
          },
        ],
      });
      const to = { partition: meta?.partition ?? -1, offset: String(meta?.baseOffset ?? -1) };
      await producer.send({
        topic: ledger,
        acks: -1,
        messages: [
          {
            key: ledgerKey(log.topic, d.partition, d.offset),
            value: encode(REPLAYED_SUBJECT, {
              dlq_topic: log.topic,
              dlq_partition: d.partition,
              dlq_offset: Number(d.offset),
              target_topic: target,
              target_partition: to.partition,
              target_offset: Number(to.offset),
              selection: describeSelection(s) + (opts.force ? ' --force' : ''),
              at: Date.now(),
            }),
          },
        ],
      });
      replayed.push({ ...pos(d), to });
      opts.logger.info({ from: ledgerKey(log.topic, d.partition, d.offset), to }, 'dead letter replayed');
    }
  } finally {
    await producer.disconnect();
  }
  return { ...outcome, replayed };
}
