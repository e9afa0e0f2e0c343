/**
 * `list` and `show` of the dead-letter command: what each dead-letter topic holds per partition
 * (retained offsets, reason, source, replays) and one record in full (headers, key, the decoded
 * value where it decodes with today's schemas, or why not). Views are plain JSON; `formatList`
 * and `formatShow` render them for a terminal.
 */
import type { Kafka } from 'kafkajs';
import type { SharedConfig } from '../config/shared.ts';
import { DeadLetterError } from './errors.ts';
import { type DeadLetter, rangeHint, readDeadLetters } from './read.ts';
import { DEAD_LETTER_TOPICS, deadLetterTopic } from './topics.ts';

/** One record in a listing. */
export interface DeadLetterRow {
  readonly partition: number;
  readonly offset: string;
  /** Append time of the dead-letter record, ISO 8601. */
  readonly at: string;
  readonly reason: string | null;
  /** `topic/partition/offset` it came from. */
  readonly source: string | null;
  readonly txId: number | null;
  readonly kind: string | null;
  /** Times replayed (ledger) and when last, ISO 8601. */
  readonly replays: number;
  readonly lastReplay: string | null;
}

export interface DeadLetterListing {
  readonly name: string;
  readonly topic: string;
  readonly partitions: readonly { partition: number; low: string; high: string; records: number }[];
  readonly records: readonly DeadLetterRow[];
}

const iso = (ms: number) => new Date(ms).toISOString();

function row(d: DeadLetter): DeadLetterRow {
  const s = d.info.source;
  const last = d.replays.at(-1);
  return {
    partition: d.partition,
    offset: String(d.offset),
    at: iso(d.timestamp),
    reason: d.info.reason,
    source: s.topic === null ? null : `${s.topic}/${s.partition ?? '?'}/${s.offset ?? '?'}`,
    txId: d.info.txId,
    kind: d.info.kind,
    replays: d.replays.length,
    lastReplay: last ? iso(last.at) : null,
  };
}

/**
 * Lists `names` (every dead-letter topic when empty); `limit` keeps the newest records of each partition.
 * @throws DeadLetterError UNKNOWN_TOPIC, TOPIC_MISSING or BROKER_UNREACHABLE.
 */
export async function listDeadLetters(
  kafka: Kafka,
  config: Pick<SharedConfig, 'kafka'>,
  names: readonly string[] = [],
  limit = Number.POSITIVE_INFINITY,
): Promise<DeadLetterListing[]> {
  const topics = names.length === 0 ? DEAD_LETTER_TOPICS : names.map(deadLetterTopic);
  const out: DeadLetterListing[] = [];
  for (const t of topics) {
    const log = await readDeadLetters(kafka, config, t);
    const rows = log.ranges.flatMap((r) =>
      log.records
        .filter((d) => d.partition === r.partition)
        .slice(-limit)
        .map(row),
    );
    out.push({
      name: t.name,
      topic: log.topic,
      partitions: log.ranges.map((r) => ({
        partition: r.partition,
        low: String(r.low),
        high: String(r.high),
        records: log.records.filter((d) => d.partition === r.partition).length,
      })),
      records: rows,
    });
  }
  return out;
}

/** One record in full. */
export interface DeadLetterView extends DeadLetterRow {
  readonly topic: string;
  readonly key: string | null;
  readonly headers: Readonly<Record<string, string>>;
  readonly valueBytes: number;
  /** The decoded value, or null with `decodeError`. */
  readonly decoded: unknown;
  readonly decodeError: string | null;
  readonly replayedTo: readonly {
    topic: string;
    partition: number;
    offset: number;
    at: string;
    selection: string;
  }[];
}

/**
 * The record at `partition`:`offset` of dead-letter topic `name`.
 * @throws DeadLetterError UNKNOWN_TOPIC, TOPIC_MISSING, BROKER_UNREACHABLE or OFFSET_OUT_OF_RANGE.
 */
export async function showDeadLetter(
  kafka: Kafka,
  config: Pick<SharedConfig, 'kafka'>,
  name: string,
  partition: number,
  offset: bigint,
): Promise<DeadLetterView> {
  const t = deadLetterTopic(name);
  const log = await readDeadLetters(kafka, config, t);
  const d = log.records.find((x) => x.partition === partition && x.offset === offset);
  if (!d)
    throw new DeadLetterError(
      'OFFSET_OUT_OF_RANGE',
      `${log.topic} has no record at ${partition}:${offset} (${rangeHint(log.ranges, partition)})`,
    );
  let decoded: unknown = null;
  let decodeError: string | null = null;
  try {
    decoded = t.decode(d.value);
  } catch (err) {
    decodeError = (err as Error).message;
  }
  return {
    ...row(d),
    topic: log.topic,
    key: d.key?.toString('utf8') ?? null,
    headers: d.headers,
    valueBytes: d.value?.length ?? 0,
    decoded,
    decodeError,
    replayedTo: d.replays.map((e) => ({
      topic: e.target_topic,
      partition: e.target_partition,
      offset: e.target_offset,
      at: iso(e.at),
      selection: e.selection,
    })),
  };
}

const cut = (s: string | null, n: number) => (s === null ? '-' : s.length > n ? `${s.slice(0, n - 1)}…` : s);

/** A listing as text: a line per partition, then a line per record. */
export function formatList(listings: readonly DeadLetterListing[]): string {
  const lines: string[] = [];
  for (const l of listings) {
    lines.push(`${l.topic} (${l.name})`);
    for (const p of l.partitions)
      lines.push(`  partition ${p.partition}: offsets ${p.low}..${p.high} (${p.records} records)`);
    if (l.records.length === 0) lines.push('  (empty)');
    for (const r of l.records)
      lines.push(
        `  ${r.partition}:${r.offset}  ${r.at}  ${r.replays > 0 ? `replayed ${r.replays}x` : 'parked'}  ` +
          `${r.txId === null ? '' : `tx ${r.txId} ${r.kind ?? ''}  `}from ${r.source ?? '-'}  ${cut(r.reason, 80)}`,
      );
  }
  return lines.join('\n');
}
