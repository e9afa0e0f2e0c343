/**
 * The range of a replay: `--from` and `--to` bounds, each a point in time, an offset, per-partition
 * offsets or a keyword, resolved to a half-open offset range [from, to) per partition of the topic.
 * Times resolve with the broker's offset-by-timestamp lookup (ListOffsets, kafkajs
 * admin.fetchTopicOffsetsByTimestamp): the first record whose log timestamp is at or after it.
 */
import type { Admin } from 'kafkajs';
import { AnalyticsInputError } from './errors.ts';

export type Bound =
  | { readonly kind: 'earliest' }
  | { readonly kind: 'latest' }
  /** Unix ms. */
  | { readonly kind: 'time'; readonly ms: number; readonly text: string }
  /** The same offset in every partition. */
  | { readonly kind: 'offset'; readonly offset: bigint }
  /** Offsets of the listed partitions only. */
  | { readonly kind: 'partitions'; readonly offsets: ReadonlyMap<number, bigint> };

// ISO 8601 date, or date and time with an explicit zone: a zoneless time would be read in the
// machine's local zone, so the same command would mean different ranges on different hosts.
const ISO_DATE = /^\d{4}-\d{2}-\d{2}$/;
const ISO_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,3})?)?(Z|[+-]\d{2}:\d{2})$/;
const OFFSET = /^\d{1,18}$/;
const PARTITION_OFFSET = /^(\d{1,6}):(\d{1,18})$/;

/**
 * Parses a bound: `earliest`, `latest`, an ISO 8601 time with a zone (`2026-01-02T10:00:00Z`) or
 * a date (UTC midnight), an offset (`12000`, in every partition), or `partition:offset` pairs
 * (`0:100,1:250`).
 * @param flag the option's name, for the message.
 * @throws AnalyticsInputError naming the flag and the accepted forms.
 */
export function parseBound(text: string, flag: string): Bound {
  const t = text.trim();
  if (t === 'earliest' || t === 'latest') return { kind: t };
  if (OFFSET.test(t)) return { kind: 'offset', offset: BigInt(t) };
  if (ISO_DATE.test(t) || ISO_TIME.test(t)) {
    const ms = Date.parse(t);
    // Date.parse rolls 2026-02-30 over to March 2; the round trip of the date part refuses it.
    const day = t.slice(0, 10);
    const real = !Number.isNaN(ms) && new Date(Date.parse(`${day}T00:00:00Z`)).toISOString().startsWith(day);
    if (real) return { kind: 'time', ms, text: t };
  }
  if (t.includes(':') && t.split(',').every((part) => PARTITION_OFFSET.test(part))) {
    const offsets = new Map<number, bigint>();
    for (const part of t.split(',')) {
      const [, p, o] = PARTITION_OFFSET.exec(part) as RegExpExecArray;
      if (offsets.has(Number(p))) throw new AnalyticsInputError(`${flag}: partition ${p} given twice`);
      offsets.set(Number(p), BigInt(o as string));
    }
    return { kind: 'partitions', offsets };
  }
  throw new AnalyticsInputError(
    `${flag} "${text}" is not a time (ISO 8601 with a zone, e.g. 2026-01-02T10:00:00Z, or a date), ` +
      'an offset (e.g. 12000), partition:offset pairs (e.g. 0:100,1:250), earliest or latest',
  );
}

/**
 * Refuses a range whose start is after its end when both bounds are of a kind comparable
 * without the broker (two times, or two single offsets).
 * @throws AnalyticsInputError
 */
export function checkOrder(from: Bound, to: Bound): void {
  if (from.kind === 'time' && to.kind === 'time' && from.ms > to.ms)
    throw new AnalyticsInputError(`--from ${from.text} is after --to ${to.text}`);
  if (from.kind === 'offset' && to.kind === 'offset' && from.offset > to.offset)
    throw new AnalyticsInputError(`--from offset ${from.offset} is after --to offset ${to.offset}`);
  if (from.kind === 'latest' && to.kind === 'earliest')
    throw new AnalyticsInputError('--from latest is after --to earliest');
}

/** Offsets to read per partition: [from, to). */
export interface ResolvedRange {
  readonly from: ReadonlyMap<number, bigint>;
  readonly to: ReadonlyMap<number, bigint>;
  /** Records in the range (Σ to − from). */
  readonly records: bigint;
}

const clamp = (v: bigint, low: bigint, high: bigint) => (v < low ? low : v > high ? high : v);

async function resolveOne(
  admin: Admin,
  topic: string,
  bound: Bound,
  flag: '--from' | '--to',
  ends: ReadonlyMap<number, { low: bigint; high: bigint }>,
): Promise<Map<number, bigint>> {
  const out = new Map<number, bigint>();
  switch (bound.kind) {
    case 'earliest':
    case 'latest':
      for (const [p, e] of ends) out.set(p, bound.kind === 'earliest' ? e.low : e.high);
      return out;
    case 'offset':
      for (const [p, e] of ends) out.set(p, clamp(bound.offset, e.low, e.high));
      return out;
    case 'partitions':
      for (const [p, o] of bound.offsets) {
        const e = ends.get(p);
        if (!e)
          throw new AnalyticsInputError(
            `${flag}: ${topic} has no partition ${p} (partitions 0..${ends.size - 1})`,
          );
        out.set(p, clamp(o, e.low, e.high));
      }
      // An end list leaves the other partitions open to their end; a start list selects partitions.
      if (flag === '--to') for (const [p, e] of ends) if (!out.has(p)) out.set(p, e.high);
      return out;
    case 'time':
      for (const { partition, offset } of await admin.fetchTopicOffsetsByTimestamp(topic, bound.ms)) {
        const e = ends.get(partition);
        if (e) out.set(partition, clamp(BigInt(offset), e.low, e.high));
      }
      return out;
  }
}

/**
 * Resolves both bounds against the topic's current offsets (the end is fixed at this moment, so a
 * replay of a live topic terminates).
 * @throws AnalyticsInputError for a partition the topic lacks or a start after the end.
 */
export async function resolveRange(
  admin: Admin,
  topic: string,
  from: Bound,
  to: Bound,
): Promise<ResolvedRange> {
  checkOrder(from, to);
  const ends = new Map(
    (await admin.fetchTopicOffsets(topic)).map((o) => [
      o.partition,
      { low: BigInt(o.low), high: BigInt(o.high) },
    ]),
  );
  const start = await resolveOne(admin, topic, from, '--from', ends);
  const end = await resolveOne(admin, topic, to, '--to', ends);
  let records = 0n;
  const fromMap = new Map<number, bigint>();
  const toMap = new Map<number, bigint>();
  for (const [p, a] of start) {
    const b = end.get(p) ?? (ends.get(p) as { high: bigint }).high;
    if (a > b) throw new AnalyticsInputError(`--from is after --to in partition ${p} (offset ${a} > ${b})`);
    fromMap.set(p, a);
    toMap.set(p, b);
    records += b - a;
  }
  return { from: fromMap, to: toMap, records };
}
