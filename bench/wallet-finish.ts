/**
 * What recording every callback attempt costs the wallet saga's hot path: `finishAttempts`
 * (services/wallet-saga/store.ts) stores a batch of results in one statement, and since attempts are
 * recorded (wallet_callback_attempts, docs/decisions/money/0013-callback-attempts-kept.md) that same
 * statement also inserts one attempt row per result. Measured on real Postgres, in a migrated schema
 * of its own, against a baseline in the same run: the same batches with nothing to record
 * (`sent: null`, as a skipped round close). Rounds alternate the two modes so load drifts hit both.
 *
 *   npx tsx bench/wallet-finish.ts [--batch 256] [--rounds 12]
 *
 * Prints per mode the batch time p50/p99 (ms) and the ratio, and the cost per recorded result (µs);
 * writes bench/results/wallet-finish-*.json. Postgres and this process share the machine's 2 cores.
 */
import { parseArgs } from 'node:util';
import { type AttemptRecord, finishAttempts, leaseCallbacks } from '../services/wallet-saga/store.ts';
import { insertCallbacks, startCallbackSchema } from '../tests/support/wallet-callbacks.ts';
import { latencySummary, report, writeResults } from './lib.ts';

const { values } = parseArgs({
  options: { batch: { type: 'string', default: '256' }, rounds: { type: 'string', default: '12' } },
});
const BATCH = Number(values.batch);
const ROUNDS = Number(values.rounds);
const T0 = Date.UTC(2026, 0, 1, 12);

/** A failed win answer kept due for a retry, with (recorded) or without (baseline) its attempt. */
const recordOf = (txId: number, at: number, recorded: boolean): AttemptRecord => ({
  status: 'due',
  nextAttemptAt: at + 60_000,
  answer: 'failed',
  code: 'OPERATOR_ERROR',
  error: 'HTTP 503',
  request: `{"action":"win","provider_tx_id":${txId},"amount":"1.00","currency":"USD"}`,
  response: 'HTTP 503 {"error":"down"}',
  event: null,
  sent: recorded
    ? {
        operatorId: 'op-bench',
        at,
        method: 'POST',
        url: 'http://op.test/wallet/win',
        headers: {
          'content-type': 'application/json',
          'webhook-id': `tx-${txId}`,
          'webhook-timestamp': String(Math.floor(at / 1000)),
          'webhook-signature': 'v1,K5oZfzN95Z9UVu1EsfQmfVNQhnkZ2pj9o9NDN/H/pI4=',
        },
        body: `{"action":"win","provider_tx_id":${txId},"amount":"1.00","currency":"USD","user_id":"u-1"}`,
        status: 503,
        responseBody: '{"error":"down"}',
        latencyMs: 12,
        class: 'failed',
        code: 'OPERATOR_ERROR',
        error: 'HTTP 503',
      }
    : null,
});

const db = await startCallbackSchema('bench_wfinish', []);
const times: Record<'baseline' | 'recorded', number[]> = { baseline: [], recorded: [] };
let txId = 0;
try {
  for (let round = 0; round < ROUNDS * 2; round++) {
    const mode = round % 2 === 0 ? 'baseline' : 'recorded';
    const at = T0 + round * 1000;
    // Every other id: a win's bet is tx_id − 1 (tests/support/wallet-callbacks.ts), never a due row here,
    // so the whole batch is leased at once.
    const ids = Array.from({ length: BATCH }, () => (txId += 2));
    await insertCallbacks(
      db.sql,
      ids.map((id) => ({
        txId: id,
        kind: 'win' as const,
        status: 'due' as const,
        nextAttemptAt: at,
        updatedAt: at,
      })),
    );
    const leased = await leaseCallbacks(db.sql, 'bench', BATCH, at, 15_000);
    const batch = leased.map((c) => ({
      txId: c.txId,
      attempts: c.attempts,
      record: recordOf(c.txId, at, mode === 'recorded'),
    }));
    const t0 = performance.now();
    const { held } = await finishAttempts(db.sql, 'bench', batch, at + 5);
    if (held.size !== BATCH)
      throw new Error(`stored ${held.size} of ${BATCH} results (leased ${leased.length})`);
    // The first round of each mode warms the plan cache: not counted.
    if (round >= 2) times[mode].push(performance.now() - t0);
    // Finished callbacks leave the due set, so every round leases exactly its own batch.
    await db.sql`update wallet_callbacks set status = 'done' where tx_id = any(${ids})`;
  }
} finally {
  await db.close();
}

const base = latencySummary(times.baseline);
const rec = latencySummary(times.recorded);
const perResultUs = ((rec.p50 - base.p50) * 1000) / BATCH;
report(
  `finishAttempts, ${BATCH} results a batch, ${ROUNDS - 1} batches per mode (Postgres on the same 2 cores)`,
  [
    { mode: 'baseline (nothing recorded)', p50_ms: base.p50, p99_ms: base.p99 },
    { mode: 'attempts recorded', p50_ms: rec.p50, p99_ms: rec.p99 },
    { mode: 'ratio recorded / baseline (p50)', p50_ms: Number((rec.p50 / base.p50).toFixed(2)), p99_ms: '' },
    { mode: 'added per recorded result (p50), µs', p50_ms: Number(perResultUs.toFixed(1)), p99_ms: '' },
  ],
);
console.log(
  writeResults('wallet-finish', { batch: BATCH, rounds: ROUNDS, baseline: base, recorded: rec, perResultUs }),
);
