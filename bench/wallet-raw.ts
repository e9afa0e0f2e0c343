/**
 * Baseline of bench/wallet.ts: the operator sandbox's raw callback rate. Signed Register Bet +
 * Register Win pairs (form A) go straight to the sandbox over HTTP, `concurrency` pairs at a time
 * for `seconds`, each worker its own player (as the saga's per-player queues would). Bodies, signing
 * and the keep-alive client are the wallet saga's own (rules/wallet/bodies.ts buildRequest,
 * http.ts createCallbackClient: Standard Webhooks via `standardwebhooks`), so the only thing left
 * out is the pipeline around the callbacks.
 */

import { answerOf, createCallbackClient } from '../lib/http/callback-client.ts';
import type { BetContext } from '../lib/log/wallet-events.ts';
import { DEFAULT_RETRY_SCHEDULE } from '../rules/retry/schedule.ts';
import { answerTable } from '../rules/wallet/answers.ts';
import { buildRequest, type CallbackJob, type OperatorConfig } from '../rules/wallet/bodies.ts';
import { latencySummary } from './lib.ts';

export interface RawOptions {
  readonly sandboxUrl: string;
  readonly secret: string;
  /** Pairs in flight at once (one worker, one player each). */
  readonly concurrency: number;
  /** How long the workers run, s. */
  readonly seconds: number;
  /** Per-request timeout, ms. */
  readonly timeoutMs: number;
}

export interface RawResult {
  readonly pairs: number;
  /** Requests answered with an acknowledgement (2 per completed pair). */
  readonly requests: number;
  /** Requests whose answer was not an acknowledgement (the reason of the first is in `firstError`). */
  readonly errors: number;
  readonly firstError: string | null;
  readonly elapsedMs: number;
  readonly requestsPerS: number;
  readonly pairsPerS: number;
  /** One request's round trip, ms. */
  readonly requestP50Ms: number;
  readonly requestP99Ms: number;
}

/** Provider tx ids far above the run's wallet_tx_seq × 4 ids, so the two never meet in the ledger. */
const RAW_TX_BASE = 8_000_000_000_000;

/** Runs the baseline. Never throws for a refused callback: it is counted in `errors`. */
export async function benchRawCallbacks(o: RawOptions): Promise<RawResult> {
  const op: OperatorConfig = {
    operatorId: 'opr_bench_raw',
    form: 'A',
    baseUrl: o.sandboxUrl,
    betPath: '/wallet/bet',
    winPath: '/wallet/win',
    rollbackPath: '/wallet/rollback',
    signingSecret: o.secret,
    timeoutMs: o.timeoutMs,
    retrySchedule: DEFAULT_RETRY_SCHEDULE,
    answers: answerTable('seed'),
    roundClose: 'zero-win',
    roundEndPath: null,
    amountFormat: 'string',
  };
  const session = { sessionToken: 'st_bench_raw', extraData: null };
  const client = createCallbackClient(Math.max(64, o.concurrency));
  const latencies: number[] = [];
  let seq = 0;
  let pairs = 0;
  let requests = 0;
  let errors = 0;
  let firstError: string | null = null;

  const call = async (job: CallbackJob): Promise<boolean> => {
    const t0 = performance.now();
    const req = buildRequest(job, op, session);
    const ex = await client.send(req, o.secret, o.timeoutMs, Date.now());
    latencies.push(performance.now() - t0);
    const answer = answerOf(ex, op.answers, { ...req, kind: job.kind });
    if (answer.class === 'ok') {
      requests += 1;
      return true;
    }
    errors += 1;
    firstError ??= `${job.kind}: ${'reason' in answer ? answer.reason : answer.class}`;
    return false;
  };

  const worker = async (w: number, until: number) => {
    while (performance.now() < until) {
      const betTx = RAW_TX_BASE + 4 * ++seq;
      const bet: BetContext = {
        session_id: `raw-session-${w}`,
        operator_id: op.operatorId,
        user_id: `raw-player-${w}`,
        currency: 'USD',
        game: 'wall-street',
        round_id: 4_000_000_000_000 + seq,
        amount_minor: 100,
        mode: 'default',
        bonus_code: null,
        free_bet_id: null,
        count_register: 1,
        demo: false,
      };
      const debited = await call({ kind: 'bet', txId: betTx, betTxId: betTx, amountMinor: 100, bet });
      if (!debited) continue;
      if (await call({ kind: 'win', txId: betTx + 1, betTxId: betTx, amountMinor: 196, bet })) pairs += 1;
    }
  };

  // A short warm-up (connections, JIT, the sandbox's first account rows), not counted.
  await Promise.all(Array.from({ length: o.concurrency }, (_, w) => worker(w, performance.now() + 500)));
  latencies.length = 0;
  pairs = 0;
  requests = 0;
  errors = 0;
  firstError = null;

  const t0 = performance.now();
  await Promise.all(Array.from({ length: o.concurrency }, (_, w) => worker(w, t0 + o.seconds * 1000)));
  const elapsedMs = performance.now() - t0;
  client.close();
  const latency = latencySummary(latencies);
  return {
    pairs,
    requests,
    errors,
    firstError,
    elapsedMs,
    requestsPerS: requests / (elapsedMs / 1000),
    pairsPerS: pairs / (elapsedMs / 1000),
    requestP50Ms: latency.p50,
    requestP99Ms: latency.p99,
  };
}
