/**
 * The analytics replay: reads a range of the `rounds` topic straight from the log (not from the
 * read models), checks every round's provably-fair proof, and folds the rounds into per-game
 * statistics as they arrive. Memory does not grow with the range: no round is kept once folded.
 */
import type { Kafka } from 'kafkajs';
import { AppError } from '../../lib/errors.ts';
import { readRange } from '../../lib/log/kafka.ts';
import type { GameSlug } from '../../rules/games/catalog.ts';
import { LogUnavailableError } from './errors.ts';
import { type AnalyticsReport, ReplayFold } from './fold.ts';
import { ProofPipe } from './proof-pipe.ts';
import { type Bound, type ResolvedRange, resolveRange } from './range.ts';

export type { AnalyticsReport };

export interface ReplayOptions {
  readonly kafka: Kafka;
  readonly topic: string;
  readonly from: Bound;
  readonly to: Bound;
  /** Games reported; rounds of the others are read and skipped. */
  readonly games: readonly GameSlug[];
  /** Gives up reading after this long, ms (default one hour). */
  readonly timeoutMs?: number;
  /** Called about every 5,000 records with records read and records in the range. */
  readonly onProgress?: (done: number, total: number) => void;
  /** Check proofs in a worker thread beside the reader (proof-pipe.ts; default true). */
  readonly proofThread?: boolean;
}

const PROGRESS_EVERY = 5000;

/** Text of a bound as the user would write it. */
function boundText(b: Bound): string {
  switch (b.kind) {
    case 'time':
      return b.text;
    case 'offset':
      return String(b.offset);
    case 'partitions':
      return [...b.offsets].map(([p, o]) => `${p}:${o}`).join(',');
    default:
      return b.kind;
  }
}

/** Message of a kafkajs failure with its cause (kafkajs wraps the network error). */
function describe(err: unknown): string {
  const e = err as { message?: string; cause?: { message?: string } };
  return [e.message, e.cause?.message].filter(Boolean).join(': ') || String(err);
}

async function resolve(kafka: Kafka, topic: string, from: Bound, to: Bound): Promise<ResolvedRange> {
  const admin = kafka.admin();
  try {
    await admin.connect();
  } catch (err) {
    throw new LogUnavailableError(`cannot reach the broker: ${describe(err)}`, err);
  }
  try {
    const topics = await admin.listTopics().catch((err: unknown) => {
      throw new LogUnavailableError(`cannot list the broker's topics: ${describe(err)}`, err);
    });
    if (!topics.includes(topic)) throw new LogUnavailableError(`topic ${topic} does not exist on the broker`);
    return await resolveRange(admin, topic, from, to);
  } catch (err) {
    if (err instanceof AppError) throw err;
    throw new LogUnavailableError(`cannot read the offsets of ${topic}: ${describe(err)}`, err);
  } finally {
    await admin.disconnect();
  }
}

/**
 * Replays [from, to) of `topic`: decode, check the proof, fold into the statistics.
 * @throws AnalyticsInputError for a bad range (partition missing, start after end).
 * @throws LogUnavailableError when the broker or topic cannot be reached or the read times out.
 */
export async function replayRounds(options: ReplayOptions): Promise<AnalyticsReport> {
  const started = performance.now();
  const { kafka, topic, games } = options;
  const range = await resolve(kafka, topic, options.from, options.to);
  const pipe = options.proofThread === false ? undefined : new ProofPipe();
  const fold = new ReplayFold(games, pipe);
  const total = Number(range.records);
  options.onProgress?.(0, total);
  try {
    await readRange(
      kafka,
      topic,
      range.from,
      ({ partition, offset, message }) => {
        const wait = fold.add(partition, offset, message.value);
        if (fold.records % PROGRESS_EVERY === 0) options.onProgress?.(fold.records, total);
        return wait;
      },
      { to: range.to, timeoutMs: options.timeoutMs ?? 3_600_000 },
    );
  } catch (err) {
    await pipe?.close();
    throw new LogUnavailableError(`reading ${topic} failed: ${describe(err)}`, err);
  }
  const fairness = await pipe?.finish();
  options.onProgress?.(fold.records, total);
  return fold.report(
    {
      topic,
      range: {
        from: boundText(options.from),
        to: boundText(options.to),
        partitions: [...range.from]
          .sort((a, b) => a[0] - b[0])
          .map(([partition, a]) => ({
            partition,
            from: String(a),
            to: String(range.to.get(partition)),
          })),
      },
      elapsed_ms: Math.round(performance.now() - started),
    },
    fairness,
  );
}
