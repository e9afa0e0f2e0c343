/**
 * Offset commits of a consumer group that survive a coordinator move (docs/decisions/log-and-topics/0010-offset-commits-find-the-coordinator.md). On a cluster the group's coordinator is the leader of its
 * `__consumer_offsets` partition; when that broker dies or a restart moves leadership, a commit is
 * answered NOT_COORDINATOR (16), COORDINATOR_NOT_AVAILABLE (15) or COORDINATOR_LOAD_IN_PROGRESS (14).
 * kafkajs (patched, patches/kafkajs+2.2.4.patch) then looks the coordinator up again before its next
 * commit; this module asks for that next commit a few times, within a bound, instead of leaving the
 * group's offset where it was until the following batch.
 */
import pRetry from 'p-retry';

/** kafkajs `KafkaJSProtocolError.type` of the three coordinator errors (codes 16, 15, 14). */
const COORDINATOR_TYPES: ReadonlySet<string> = new Set([
  'NOT_COORDINATOR_FOR_GROUP',
  'GROUP_COORDINATOR_NOT_AVAILABLE',
  'GROUP_LOAD_IN_PROGRESS',
]);
/** Kafka protocol error codes of the same: NOT_COORDINATOR, COORDINATOR_NOT_AVAILABLE, COORDINATOR_LOAD_IN_PROGRESS. */
const COORDINATOR_CODES: ReadonlySet<number> = new Set([16, 15, 14]);

/**
 * True when `err` says the group's coordinator moved or is not ready (a kafkajs
 * KafkaJSProtocolError of type NOT_COORDINATOR_FOR_GROUP, GROUP_COORDINATOR_NOT_AVAILABLE or
 * GROUP_LOAD_IN_PROGRESS, or of code 16, 15 or 14): the commit succeeds once asked again.
 */
export function isCoordinatorError(err: unknown): boolean {
  if (typeof err !== 'object' || err === null) return false;
  const e = err as { name?: unknown; type?: unknown; code?: unknown };
  if (e.name !== 'KafkaJSProtocolError') return false;
  return (
    (typeof e.type === 'string' && COORDINATOR_TYPES.has(e.type)) ||
    (typeof e.code === 'number' && COORDINATOR_CODES.has(e.code))
  );
}

export interface CommitRetryOptions {
  /** Attempts after the first (5). */
  readonly retries?: number;
  /** First and longest wait between attempts, ms (100, 1000; doubling, randomized). */
  readonly minMs?: number;
  readonly maxMs?: number;
  /** Stops retrying (the consumer is stopping): the last error is thrown. */
  readonly signal?: AbortSignal;
  /** Called after every failed attempt, retried or not, with its 1-based number. */
  readonly onFailure?: (err: unknown, attempt: number, willRetry: boolean) => void | Promise<void>;
}

/**
 * Runs `commit` (one offset commit); a coordinator error (`isCoordinatorError`) is retried up to
 * `retries` times with backoff, any other error is not.
 * @throws the error of the last attempt.
 */
export async function commitRetrying(
  commit: () => Promise<unknown>,
  options: CommitRetryOptions = {},
): Promise<void> {
  const retries = options.retries ?? 5;
  await pRetry(
    async () => {
      await commit();
    },
    {
      retries,
      minTimeout: options.minMs ?? 100,
      maxTimeout: options.maxMs ?? 1000,
      factor: 2,
      randomize: true,
      ...(options.signal ? { signal: options.signal } : {}),
      shouldRetry: (err) => isCoordinatorError(err),
      onFailedAttempt: async (err) => {
        await options.onFailure?.(err, err.attemptNumber, err.retriesLeft > 0 && isCoordinatorError(err));
      },
    },
  );
}
