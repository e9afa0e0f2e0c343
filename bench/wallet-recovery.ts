/**
 * Wallet benchmark: wins waiting for a retry when the operator's win path comes back
 * (docs/decisions/retries/0002-retries-pulled-forward.md, retries pulled forward). One operator sandbox process
 * (services/operator-sandbox) is the wallet of two saga processes, each with its own topics, schema,
 * consumer group and operator row on the published default retry schedule (5 s, 5 min, …): one with
 * pulling forward (WALLET_SAGA_PULL_FORWARD true) and the baseline without it, side by side in the
 * same run, so both meet the same outage on the same machine.
 *
 * This process plays the round engine, API and settlement: for each saga it appends BetPlaced at
 * `--rate` bets a second (round-robin over `--players`), and each bet's BetSettled (won or lost,
 * alternately: a win or a zero-amount round close, both on the sandbox's win path) once its debit
 * is acknowledged. After `--warmup-s`, the sandbox answers 500 on its win path for `--outage-s`
 * (PUT /_sandbox/faults, kind `win`) while bets keep succeeding; then it recovers, the bets go on for
 * `--after-s`, and the run waits (at most `--drain-s`) until every callback is done.
 *
 * Figure: for the wins and closes that failed at least once and were credited after the recovery,
 * the time from the operator's first success on the win path after the recovery to each one's
 * credit (CallbackSucceeded `at`), p50 / p99 / max by HdrHistogram (lib.ts latencySummary), also for
 * those that failed twice or more (their next step was 5 min). Checks printed beside: one
 * CallbackSucceeded per callback, one ledger movement per win id at the sandbox, nothing parked.
 * Every process (the two sagas, the sandbox, Kafka, Postgres and this one) shares the machine's
 * cores. Writes bench/results/wallet-recovery-<time>.json; asserts nothing.
 *
 * Usage: tsx bench/wallet-recovery.ts [--rate 10] [--players 50] [--warmup-s 5] [--outage-s 25]
 *          [--after-s 10] [--drain-s 420]
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { newSigningSecret } from '../lib/auth/secrets.ts';
import { createSql } from '../lib/db/pool.ts';
import type { BetContext, WalletEvent } from '../lib/log/wallet-events.ts';
import { DEFAULT_RETRY_POLICY } from '../rules/retry/schedule.ts';
import { loadConfig } from '../tests/support/config.ts';
import { waitFor } from '../tests/support/poll.ts';
import { freePort, type Service, startService, statusOf, uniqueId } from '../tests/support/processes.ts';
import { setFaults } from '../tests/support/wallet-players.ts';
import { betLost, betPlaced, betWon, type SagaEnv, startSagaEnv } from '../tests/support/wallet-saga.ts';
import { latencySummary, report, writeResults } from './lib.ts';

const { values } = parseArgs({
  options: {
    rate: { type: 'string', default: '10' },
    players: { type: 'string', default: '50' },
    'warmup-s': { type: 'string', default: '5' },
    'outage-s': { type: 'string', default: '25' },
    'after-s': { type: 'string', default: '10' },
    'drain-s': { type: 'string', default: '420' },
  },
});
const num = (name: keyof typeof values, min: number, max: number): number => {
  const n = Number(values[name]);
  if (!Number.isFinite(n) || n < min || n > max)
    throw new Error(`--${name} must be a number from ${min} to ${max}`);
  return n;
};
const rate = num('rate', 1, 500);
const players = num('players', 1, 10_000);
const warmupMs = num('warmup-s', 0, 600) * 1000;
const outageMs = num('outage-s', 1, 3600) * 1000;
const afterMs = num('after-s', 1, 600) * 1000;
const drainMs = num('drain-s', 10, 7200) * 1000;

/** Payout of every won bet, minor units (the stake is the session's, 1,000). */
const PAYOUT = 2_500;

/** One saga with its own topics, schema and operator row, and the bets this process placed on it. */
interface Arm {
  readonly name: 'pull-forward' | 'baseline';
  readonly env: SagaEnv;
  readonly saga: Service;
  readonly readyUrl: string;
  readonly contexts: BetContext[];
  /** Bet tx id → its context and whether it wins. */
  readonly bets: Map<number, { readonly bet: BetContext; readonly won: boolean }>;
  /** Bets whose settlement was appended. */
  readonly settled: Set<number>;
  /** First tx id of this arm (the arms' ids never meet at the shared sandbox). */
  nextTx: number;
  /** env.events read so far. */
  seen: number;
}

const sandboxPort = await freePort();
const tmp = mkdtempSync(join(tmpdir(), 'bench-recovery-'));
const sandboxSchema = uniqueId('bench_recovery_sbx_');
const secret = newSigningSecret();
const sandbox = startService('services/operator-sandbox/main.ts', {
  SANDBOX_HOST: '127.0.0.1',
  SANDBOX_PORT: String(sandboxPort),
  SANDBOX_DB_SCHEMA: sandboxSchema,
  SANDBOX_SIGNING_SECRET: secret,
  SANDBOX_SECRET_FILE: `${tmp}/signing-secret`,
  DATABASE_POOL_MAX: '16',
  LOG_LEVEL: 'warn',
});
const sandboxUrl = `http://127.0.0.1:${sandboxPort}`;
const arms: Arm[] = [];
const stopAll = async () => {
  await Promise.all(arms.map((a) => a.saga.stop('SIGTERM')));
  await sandbox.stop('SIGTERM');
  for (const a of arms) await a.env.close().catch(() => {});
  const sql = createSql(loadConfig(process.env, {}), { max: 1 });
  await sql.unsafe(`drop schema if exists "${sandboxSchema}" cascade`).catch(() => {});
  await sql.end({ timeout: 5 });
  rmSync(tmp, { recursive: true, force: true });
};

try {
  for (const [i, name] of (['pull-forward', 'baseline'] as const).entries()) {
    const env = await startSagaEnv(
      { url: sandboxUrl, secret },
      { timeoutMs: 5_000, retryPolicy: { ...DEFAULT_RETRY_POLICY }, partitions: 2 },
    );
    const port = await freePort();
    const saga = startService('services/wallet-saga/main.ts', {
      ...env.env,
      WALLET_SAGA_HTTP_PORT: String(port),
      WALLET_SAGA_INSTANCE: `${name}-saga`,
      WALLET_SAGA_PULL_FORWARD: name === 'pull-forward' ? 'true' : 'false',
      WALLET_SAGA_CACHE_MS: '1000',
      LOG_LEVEL: 'warn',
    });
    const contexts: BetContext[] = [];
    for (let p = 0; p < players; p++) contexts.push(await env.session(`${name}-p${p}`));
    arms.push({
      name,
      env,
      saga,
      readyUrl: `http://127.0.0.1:${port}/ready`,
      contexts,
      bets: new Map(),
      settled: new Set(),
      nextTx: (i + 1) * 10_000_000,
      seen: 0,
    });
  }
  await waitFor(
    'the sandbox and both sagas ready',
    async () => {
      for (const s of [sandbox, ...arms.map((a) => a.saga)])
        if (s.child.exitCode !== null) throw new Error(`a service exited:\n${s.output().slice(-3000)}`);
      if ((await statusOf(`${sandboxUrl}/ready`)) !== 200) return undefined;
      for (const a of arms) if ((await statusOf(a.readyUrl)) !== 200) return undefined;
      return true;
    },
    120_000,
    250,
  );

  /** Appends a bet on every arm; the bet wins every other time. */
  let placedNo = 0;
  const place = async () => {
    const won = placedNo % 2 === 0;
    const ctx = placedNo % players;
    placedNo++;
    await Promise.all(
      arms.map(async (a) => {
        const tx = a.nextTx;
        a.nextTx += 4;
        const bet = a.contexts[ctx] as BetContext;
        a.bets.set(tx, { bet, won });
        await a.env.append(bet, [betPlaced(bet, tx)]);
      }),
    );
  };
  /** Settles the bets whose debit was acknowledged, as settlement does. */
  const settle = async () => {
    for (const a of arms) {
      const fresh = a.env.events.slice(a.seen);
      a.seen += fresh.length;
      for (const e of fresh) {
        if (e.type !== 'CallbackSucceeded' || e.value.kind !== 'bet') continue;
        const tx = e.value.tx_id;
        const placed = a.bets.get(tx);
        if (placed === undefined || a.settled.has(tx)) continue;
        a.settled.add(tx);
        const { bet, won } = placed;
        await a.env.append(bet, [won ? betWon(bet, tx, PAYOUT) : betLost(bet, tx)]);
      }
    }
  };
  let betting = true;
  const placer = (async () => {
    const gap = 1000 / rate;
    let due = Date.now();
    while (betting) {
      await place();
      due += gap;
      await new Promise((r) => setTimeout(r, Math.max(0, due - Date.now())));
    }
  })();
  let settling = true;
  const settler = (async () => {
    while (settling || arms.some((a) => a.settled.size < a.bets.size)) {
      await settle();
      await new Promise((r) => setTimeout(r, 25));
      if (!settling && arms.every((a) => a.settled.size >= a.bets.size)) break;
    }
  })();

  const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
  await sleep(warmupMs);
  const outageAt = Date.now();
  await setFaults(sandboxUrl, [{ kind: 'win', mode: 'error500' }]);
  console.log(`win path answering 500 from ${new Date(outageAt).toISOString()} for ${outageMs / 1000} s`);
  await sleep(outageMs);
  await setFaults(sandboxUrl, []);
  const recoveredAt = Date.now();
  console.log(`win path recovered at ${new Date(recoveredAt).toISOString()}`);
  await sleep(afterMs);
  betting = false;
  await placer;
  settling = false;
  await waitFor(
    'every bet settled by this process',
    async () => (arms.every((a) => a.settled.size >= a.bets.size) ? true : undefined),
    60_000,
    100,
  );
  await settler;
  console.log(`bets placed per saga: ${placedNo}; waiting up to ${drainMs / 1000} s for every callback`);
  const pays = (a: Arm) => [...a.bets.keys()].map((tx) => tx + 1);
  const successOf = (a: Arm) => {
    const m = new Map<number, Extract<WalletEvent, { type: 'CallbackSucceeded' }>['value'][]>();
    for (const e of a.env.events)
      if (e.type === 'CallbackSucceeded') m.set(e.value.tx_id, [...(m.get(e.value.tx_id) ?? []), e.value]);
    return m;
  };
  await waitFor(
    'every win and close of both sagas credited',
    async () => (arms.every((a) => pays(a).every((tx) => successOf(a).has(tx))) ? true : undefined),
    drainMs,
    500,
  );

  const sbxSql = createSql(loadConfig(process.env, { DATABASE_SCHEMA: sandboxSchema }), { max: 1 });
  const rows: Record<string, string | number>[] = [];
  const results: Record<string, unknown> = {};
  for (const a of arms) {
    const ok = successOf(a);
    const failures = new Map<number, number>();
    for (const e of a.env.events)
      if (e.type === 'CallbackFailed' && e.value.kind !== 'bet')
        failures.set(e.value.tx_id, (failures.get(e.value.tx_id) ?? 0) + 1);
    const parked = a.env.events.filter((e) => e.type === 'CallbackFailed' && e.value.parked).length;
    // The operator's first success on the win path after it recovered.
    const firstSuccess = Math.min(
      ...[...ok.values()]
        .flat()
        .filter((v) => v.kind !== 'bet' && v.at >= recoveredAt)
        .map((v) => v.at),
    );
    const pending = pays(a).filter(
      (tx) => (failures.get(tx) ?? 0) > 0 && (ok.get(tx)?.[0]?.at ?? 0) >= recoveredAt,
    );
    const twice = pending.filter((tx) => (failures.get(tx) ?? 0) >= 2);
    const wait = (txs: number[]) =>
      latencySummary(txs.map((tx) => (ok.get(tx)?.[0]?.at ?? 0) - firstSuccess));
    const all = wait(pending);
    const stepped = wait(twice);
    const doubles = [...ok.values()].filter((v) => v.length > 1).length;
    const ids = pays(a).map(String);
    const [booked] = await sbxSql<{ n: string; ids: string }[]>`
      select count(*)::text as n, count(distinct provider_tx_id)::text as ids
      from transactions where kind = 'win' and provider_tx_id = any(${ids}::text[])`;
    rows.push({
      saga: a.name,
      'pending wins+closes': pending.length,
      'p50 s': (all.p50 / 1000).toFixed(2),
      'p99 s': (all.p99 / 1000).toFixed(2),
      'max s': (all.max / 1000).toFixed(2),
      'failed ≥2: n': twice.length,
      'failed ≥2: p99 s': (stepped.p99 / 1000).toFixed(2),
      'credited twice': doubles,
      'sandbox win rows / ids / callbacks': `${booked?.n}/${booked?.ids}/${ids.length}`,
      parked,
    });
    results[a.name] = {
      pending: all,
      failedTwiceOrMore: stepped,
      creditedTwice: doubles,
      sandboxWinRows: Number(booked?.n),
      sandboxWinIds: Number(booked?.ids),
      callbacks: ids.length,
      parked,
    };
  }
  await sbxSql.end({ timeout: 5 });
  report(
    `First success on the win path after a ${outageMs / 1000} s outage → each pending win or close credited (same run)`,
    rows,
  );
  console.log(
    `Every process (two sagas, the sandbox, Kafka, Postgres and this bench's players) shares the same ${cpus().length} cores; load average ${loadavg()
      .map((l) => l.toFixed(1))
      .join(' ')}.`,
  );
  console.log(
    `results: ${writeResults('wallet-recovery', { rate, players, warmupMs, outageMs, afterMs, betsPerSaga: placedNo, ...results })}`,
  );
} finally {
  await stopAll();
}
