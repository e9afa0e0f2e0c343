/**
 * Carries out one callback job and records its outcome on the log (the decisions are plan.ts's).
 *
 * - Bets: one attempt, never retried (betOutcome decides the events; a failure is compensated by
 *   a RollbackRequested that this saga consumes in turn).
 * - Wins and rollbacks: retried by p-retry with the operator's RetryPolicy (full-jitter waits from
 *   retry-policy.ts) while the verdict is `failed`; the same request body and webhook-id every time,
 *   re-signed per attempt. A refusal (e.g. 409 BET_NOT_FOUND) or the last failed attempt parks it:
 *   the original record is copied to `wallet-transactions.dead-letter` (headers: reason, attempts,
 *   kind, tx-id, source topic/partition/offset), then CallbackFailed{parked:true} is appended.
 *
 * Outcome events go to the job's key (the player's), so they stay in order with the player's
 * other events.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import type { IHeaders, Producer } from 'kafkajs';
import pRetry from 'p-retry';
import type { CallbackClient } from '../../lib/http/callback-client.ts';
import { topicName } from '../../lib/log/topics.ts';
import { appendWalletEvents, type WalletEvent } from '../../lib/log/wallet-events.ts';
import type { Logger } from '../../lib/logger.ts';
import { backoffDelayMs } from '../../rules/retry/schedule.ts';
import { type Ack, buildRequest, type CallbackJob, type Verdict } from '../../rules/wallet/bodies.ts';
import { betNotSent, betOutcome, failed, jobKey, succeeded } from '../../rules/wallet/plan.ts';
import type { WalletSagaConfig } from './config.ts';
import type { Directory } from './directory.ts';
import type { SagaMetrics } from './metrics.ts';

/** The record a job came from, for the dead-letter copy. */
export interface SourceRecord {
  readonly topic: string;
  readonly partition: number;
  readonly offset: string;
  readonly key: Buffer | null;
  readonly value: Buffer | null;
}

export interface ExecutorDeps {
  readonly config: Pick<WalletSagaConfig, 'kafka'>;
  readonly producer: Producer;
  readonly directory: Directory;
  readonly client: CallbackClient;
  readonly metrics: SagaMetrics;
  readonly logger: Logger;
  /** Unix ms. */
  readonly now: () => number;
  /** Uniform in [0, 1). */
  readonly random: () => number;
  /** Aborted on shutdown: waits and retries stop, the job rejects and its record stays uncommitted. */
  readonly signal: AbortSignal;
}

class AttemptFailed extends Error {
  constructor(readonly verdict: Exclude<Verdict, { type: 'ok' }>) {
    super(verdict.reason);
  }
}

/**
 * Runs `job` to its end and appends its outcome events.
 * @throws a kafkajs error when the outcome cannot be appended, a database error from the
 *   directory, or the abort reason on shutdown; the record is then not committed.
 */
export async function executeJob(deps: ExecutorDeps, job: CallbackJob, source: SourceRecord): Promise<void> {
  const { directory, metrics, now } = deps;
  // A job still queued behind its player's earlier ones when shutdown begins is not started: it
  // stays uncommitted and runs after the restart, instead of calling the operator during the stop.
  deps.signal.throwIfAborted();
  const append = (events: WalletEvent[]) =>
    appendWalletEvents(deps.producer, deps.config, jobKey(job), events);
  const op = await directory.operator(job.bet.operator_id, now());
  const session = op ? await directory.session(job.bet.session_id) : null;
  if (!op || !session) {
    const reason = op
      ? `unknown session ${job.bet.session_id}`
      : `unknown or disabled operator ${job.bet.operator_id}`;
    const code = op ? 'SESSION_UNKNOWN' : 'OPERATOR_UNKNOWN';
    metrics.callbacks.inc({ kind: job.kind, outcome: job.kind === 'bet' ? 'refused' : 'parked' });
    if (job.kind === 'bet') return append([betNotSent(job, code, reason, now())]);
    return park(deps, job, source, 0, reason, append);
  }
  const req = buildRequest(job, op, session);
  const attempt = async (): Promise<Verdict> => {
    const end = metrics.attemptSeconds.startTimer({ kind: job.kind });
    const v = await deps.client.send(req, op.signingSecret, op.timeoutMs, now());
    end();
    metrics.attempts.inc({ kind: job.kind, verdict: v.type });
    return v;
  };

  if (job.kind === 'bet') {
    const verdict = await attempt();
    metrics.callbacks.inc({ kind: 'bet', outcome: verdict.type });
    if (verdict.type !== 'ok') deps.logger.info({ txId: job.txId, verdict }, 'bet callback not acknowledged');
    return append(betOutcome(job, verdict, now()));
  }

  let attempts = 0;
  let last: Exclude<Verdict, { type: 'ok' }> | undefined;
  const policy = op.retryPolicy;
  let ack: Ack;
  try {
    ack = await pRetry(
      async () => {
        attempts++;
        const v = await attempt();
        if (v.type === 'ok') return v.ack;
        last = v;
        throw new AttemptFailed(v);
      },
      {
        retries: policy.retries,
        // The waits are ours (full jitter); p-retry's own timeouts are zeroed.
        minTimeout: 0,
        maxTimeout: 0,
        factor: 1,
        randomize: false,
        signal: deps.signal,
        shouldRetry: (err) => err instanceof AttemptFailed && err.verdict.type === 'failed',
        onFailedAttempt: async (err) => {
          if (!(err instanceof AttemptFailed) || err.verdict.type !== 'failed' || err.retriesLeft <= 0)
            return;
          metrics.retries.inc({ kind: job.kind });
          const wait = backoffDelayMs(err.attemptNumber, policy, deps.random());
          deps.logger.debug(
            { txId: job.txId, attempt: err.attemptNumber, wait, reason: err.message },
            'retrying',
          );
          await sleep(wait, undefined, { signal: deps.signal });
        },
      },
    );
  } catch (err) {
    if (!(err instanceof AttemptFailed) || last === undefined) throw err;
    metrics.callbacks.inc({ kind: job.kind, outcome: 'parked' });
    return park(deps, job, source, attempts, last.reason, append);
  }
  metrics.callbacks.inc({ kind: job.kind, outcome: 'ok' });
  await append([succeeded(job, ack, attempts, now())]);
}

async function park(
  deps: ExecutorDeps,
  job: CallbackJob,
  source: SourceRecord,
  attempts: number,
  reason: string,
  append: (events: WalletEvent[]) => Promise<void>,
): Promise<void> {
  deps.metrics.parked.inc({ kind: job.kind });
  deps.logger.warn(
    { txId: job.txId, kind: job.kind, attempts, reason },
    'callback parked on the dead-letter topic',
  );
  const headers: IHeaders = {
    reason: reason.slice(0, 500),
    attempts: String(attempts),
    kind: job.kind,
    'tx-id': String(job.txId),
    'source-topic': source.topic,
    'source-partition': String(source.partition),
    'source-offset': source.offset,
  };
  // Dead-letter first: a crash between the two re-runs the job and parks it again (a duplicate
  // dead-letter record whose replay is harmless), never loses it.
  await deps.producer.send({
    topic: topicName(deps.config, 'walletDeadLetter'),
    acks: -1,
    messages: [{ key: source.key, value: source.value, headers }],
  });
  await append([failed(job, attempts, reason, true, deps.now())]);
}
