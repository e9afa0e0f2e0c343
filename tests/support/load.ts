/**
 * Test support (not a test file) for the process-level tests of the projector (SIGKILL and SIGTERM
 * in the middle of a replay): one load for all three of its projections — rounds, wallet
 * transactions and auth keys — appended in bulk, and the read models it must end with, so a test
 * can say exactly what was lost or doubled.
 */
import { randomBytes } from 'node:crypto';
import type { Message } from 'kafkajs';
import { secretHash } from '../../lib/auth/credentials.ts';
import { encode } from '../../lib/log/codec.ts';
import { partitionOffsets } from '../../lib/log/kafka.ts';
import { ensureTopics, topicName } from '../../lib/log/topics.ts';
import { encodeEvent, type WalletEvent, walletKey } from '../../lib/log/wallet-events.ts';
import { createTestEnv, produceAll, roundMessage, sampleRounds, type TestEnv } from './projector.ts';
import { placed, T0 } from './settlement.ts';

/** How much of each topic the load holds. */
export interface Load {
  /** Rounds per game (four games). */
  readonly roundsPerGame: number;
  /** Bets, each BetPlaced + its debit answer + BetSettled (+ the win's answer for a third of them). */
  readonly bets: number;
  /** Keys created; every fifth is revoked afterwards. */
  readonly keys: number;
}

export interface LoadEnv extends TestEnv {
  readonly walletTopic: string;
  readonly keysTopic: string;
}

const PLAYERS = 500;
const betTx = (i: number) => 1000 + 4 * i;
const won = (i: number) => i % 3 === 0;
const keyId = (i: number) => `key_${i.toString(16).padStart(16, '0')}`;

/** A test environment (own namespace, schema, groups) with the rounds, wallet and auth-keys topics. */
export async function createLoadEnv(name: string): Promise<LoadEnv> {
  const base = await createTestEnv(name);
  const admin = base.kafka.admin();
  await admin.connect();
  await ensureTopics(admin, base.config, ['authKeys', 'walletTransactions']);
  await admin.disconnect();
  return {
    ...base,
    walletTopic: topicName(base.config, 'walletTransactions'),
    keysTopic: topicName(base.config, 'authKeys'),
  };
}

function walletEvents(i: number): WalletEvent[] {
  const tx = betTx(i);
  const bet = placed(tx, 'crash', 1 + Math.floor(i / PLAYERS), { user_id: `p-${i % PLAYERS}` });
  const answer = (kind: 'bet' | 'win', balance: string, at: number): WalletEvent => ({
    type: 'CallbackSucceeded',
    value: {
      tx_id: kind === 'bet' ? tx : tx + 1,
      bet_tx_id: tx,
      kind,
      operator_tx_id: `op-${tx}-${kind}`,
      old_balance: '0.00',
      new_balance: balance,
      amount_minor: kind === 'bet' ? 1000 : 2000,
      answer: 'ok',
      attempts: 1,
      at,
    },
  });
  const events: WalletEvent[] = [
    bet,
    answer('bet', `${i}.00`, T0 + 10 * i + 1),
    {
      type: 'BetSettled',
      value: {
        tx_id: tx,
        bet: bet.value.bet,
        outcome: won(i) ? 'won' : 'lost',
        payout_minor: won(i) ? 2000 : 0,
        win_tx_id: won(i) ? tx + 1 : null,
        at: T0 + 10 * i + 2,
      },
    },
  ];
  if (won(i)) events.push(answer('win', `${i}.50`, T0 + 10 * i + 3));
  return events;
}

/** Appends the whole load (records of one player, and of one key, stay in order). */
export async function appendLoad(e: LoadEnv, load: Load): Promise<void> {
  await produceAll(e.producer, e.topic, sampleRounds(load.roundsPerGame).map(roundMessage));
  const wallet: Message[] = [];
  for (let i = 0; i < load.bets; i++) {
    const key = walletKey({ operator_id: 'op-1', user_id: `p-${i % PLAYERS}` });
    for (const ev of walletEvents(i)) wallet.push({ key, value: encodeEvent(ev) });
  }
  await produceAll(e.producer, e.walletTopic, wallet);
  const keys: Message[] = [];
  for (let i = 0; i < load.keys; i++)
    keys.push({
      key: keyId(i),
      value: encode('casino.auth.KeyCreated', {
        key_id: keyId(i),
        name: `load ${i}`,
        kind: 'private',
        secret_sha256: secretHash(randomBytes(8).toString('hex')),
        scopes: ['read:games'],
        rate_limit: 1000,
        allowed_origins: [],
        admin: false,
        visitor_id: null,
        bound_domain: null,
        created_at: T0 + i,
      }),
    });
  for (let i = 0; i < load.keys; i += 5)
    keys.push({
      key: keyId(i),
      value: encode('casino.auth.KeyRevoked', { key_id: keyId(i), at: T0 + 1_000_000 + i }),
    });
  await produceAll(e.producer, e.keysTopic, keys);
}

/** Rows the three read models hold now: rounds, wallet_transactions, api_keys. */
export async function rowCounts(e: LoadEnv): Promise<{ rounds: number; wallet: number; keys: number }> {
  const [r] = await e.sql<{ rounds: number; wallet: number; keys: number }[]>`
    select (select count(*)::int from rounds) as rounds,
           (select count(*)::int from wallet_transactions) as wallet,
           (select count(*)::int from api_keys) as keys`;
  return r ?? { rounds: 0, wallet: 0, keys: 0 };
}

/** Partitions whose checkpoint is not at the high-water mark, as `topic:partition checkpoint/high`. */
export async function behind(e: LoadEnv): Promise<string[]> {
  const rows = await e.sql<{ topic: string; partition: number; offset: string }[]>`
    select topic, "partition", "offset"::text as "offset" from projection_checkpoints`;
  const out: string[] = [];
  for (const topic of [e.topic, e.walletTopic, e.keysTopic]) {
    for (const [p, o] of await partitionOffsets(e.kafka, topic)) {
      if (o.high === 0n) continue;
      const cp = rows.find((r) => r.topic === topic && r.partition === p)?.offset;
      if (cp !== String(o.high)) out.push(`${topic}:${p} ${cp ?? 'none'}/${o.high}`);
    }
  }
  return out;
}

/**
 * Compares the read models with what `load` must produce, exactly: every round once per game with
 * consecutive ids, every bet and win row with its final status, every player's last balance, every
 * key with its revocation.
 * @returns the differences, empty when there are none.
 */
export async function readModelProblems(e: LoadEnv, load: Load): Promise<string[]> {
  const problems: string[] = [];
  const rounds = await e.sql<{ n: number; d: number; span: number }[]>`
    select count(*)::int as n, count(distinct round_id)::int as d, (max(round_id) - min(round_id) + 1)::int as span
    from rounds group by game_id`;
  if (rounds.length !== 4) problems.push(`rounds of ${rounds.length} games, want 4`);
  for (const r of rounds)
    if (r.n !== load.roundsPerGame || r.d !== r.n || r.span !== r.n)
      problems.push(`rounds: ${JSON.stringify(r)}, want ${load.roundsPerGame} consecutive, distinct`);

  const txs = await e.sql<{ tx_id: string; kind: string; status: string; round_status: string }[]>`
    select tx_id::text, kind, status, round_status from wallet_transactions`;
  const byTx = new Map(txs.map((t) => [Number(t.tx_id), t]));
  let wantRows = 0;
  for (let i = 0; i < load.bets; i++) {
    const b = byTx.get(betTx(i));
    const status = won(i) ? 'won' : 'lost';
    if (b?.kind !== 'bet' || b.status !== 'succeeded' || b.round_status !== status)
      problems.push(`bet ${betTx(i)}: ${JSON.stringify(b)}, want succeeded/${status}`);
    wantRows += 1;
    if (!won(i)) continue;
    wantRows += 1;
    const w = byTx.get(betTx(i) + 1);
    if (w?.kind !== 'win' || w.status !== 'succeeded')
      problems.push(`win ${betTx(i) + 1}: ${JSON.stringify(w)}`);
  }
  if (txs.length !== wantRows) problems.push(`wallet_transactions: ${txs.length} rows, want ${wantRows}`);
  const balances = await e.sql<
    { user_id: string; balance: string }[]
  >`select user_id, balance from wallet_balances`;
  const want = new Map<string, string>();
  for (let i = 0; i < load.bets; i++) want.set(`p-${i % PLAYERS}`, won(i) ? `${i}.50` : `${i}.00`);
  if (balances.length !== want.size)
    problems.push(`wallet_balances: ${balances.length} rows, want ${want.size}`);
  for (const b of balances)
    if (want.get(b.user_id) !== b.balance)
      problems.push(`balance of ${b.user_id}: ${b.balance}, want ${want.get(b.user_id)}`);

  const keys = await e.sql<{ key_id: string; revoked: boolean }[]>`
    select key_id, revoked_at is not null as revoked from api_keys`;
  if (keys.length !== load.keys) problems.push(`api_keys: ${keys.length} rows, want ${load.keys}`);
  for (const k of keys) {
    const i = Number.parseInt(k.key_id.slice(4), 16);
    if (k.revoked !== (i % 5 === 0)) problems.push(`key ${k.key_id}: revoked ${k.revoked}`);
  }
  return problems.slice(0, 20);
}
