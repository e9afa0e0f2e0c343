/**
 * Test support for settlement and the wallet projector: builders of wallet events and rounds, and
 * an isolated environment (own topics, schema, consumer groups; removed afterwards).
 */
import { randomBytes } from 'node:crypto';
import { readRange } from '../../lib/log/kafka.ts';
import { encodeRoundEvent } from '../../lib/log/rounds-codec.ts';
import { ensureTopics, topicName } from '../../lib/log/topics.ts';
import {
  appendWalletEvents,
  type BetContext,
  type BetPlaced,
  decodeWalletEvent,
  type WalletEvent,
  walletKey,
} from '../../lib/log/wallet-events.ts';
import { type GameSlug, gameBySlug } from '../../rules/games/catalog.ts';
import type { RoundEvent, RoundFinished, RoundResult } from '../../rules/rounds/round.ts';
import { createTestEnv, roundMessage, sampleRound, type TestEnv } from './projector.ts';

export const T0 = Date.UTC(2026, 5, 1);

/** A round of `game` with sequence `seq` (round_id = game_id·10¹² + seq), `result` and no proof. */
export function round(game: GameSlug, seq: number, finishedAt: number, result: RoundResult): RoundFinished {
  return { ...sampleRound(game, seq, finishedAt), result, proof: null };
}

const SELECTION: Record<GameSlug, BetPlaced['selection']> = {
  crash: { 'casino.wallet.CrashBet': { auto_cashout: '2.00' } },
  double: { 'casino.wallet.DoubleBet': { color: 'red' } },
  slot: { 'casino.wallet.SlotBet': { lines: 1 } },
  'wall-street': { 'casino.wallet.WallStreetBet': { trend: 'up' } },
};

/** A BetPlaced of `txId` on round `seq` of `game`; defaults: USD 10.00, mode default, not demo, placed at T0. */
export function placed(
  txId: number,
  game: GameSlug,
  seq: number,
  over: Partial<BetContext> & { selection?: BetPlaced['selection']; placedAt?: number } = {},
): WalletEvent & { type: 'BetPlaced' } {
  const { selection, placedAt, ...ctx } = over;
  const info = gameBySlug(game) as { id: number };
  return {
    type: 'BetPlaced',
    value: {
      tx_id: txId,
      bet: {
        session_id: '7f1c6c1e-2a4b-4c3d-8e5f-000000000001',
        operator_id: 'op-1',
        user_id: `u-${txId}`,
        currency: 'USD',
        game,
        round_id: info.id * 1_000_000_000_000 + seq,
        amount_minor: 1000,
        mode: 'default',
        bonus_code: null,
        free_bet_id: null,
        count_register: 1,
        demo: false,
        ...ctx,
      },
      selection: selection ?? SELECTION[game],
      placed_at: placedAt ?? T0,
    },
  };
}

/** The operator's answer to a callback of `kind` for bet `betTxId`. */
export function succeeded(
  betTxId: number,
  kind: 'bet' | 'win' | 'rollback',
  newBalance: string,
  amountMinor = 1000,
): WalletEvent & { type: 'CallbackSucceeded' } {
  const txId = betTxId + (kind === 'bet' ? 0 : kind === 'win' ? 1 : 2);
  return {
    type: 'CallbackSucceeded',
    value: {
      tx_id: txId,
      bet_tx_id: betTxId,
      kind,
      operator_tx_id: `op-${txId}`,
      old_balance: '100.00',
      new_balance: newBalance,
      amount_minor: amountMinor,
      answer: 'ok',
      attempts: 1,
      at: T0 + 100,
    },
  };
}

/** What settlement decided, as read on the log: BetSettled per bet tx_id, and the other decisions. */
export interface SettlementTally {
  /** How many BetSettled each bet has. */
  readonly settled: Map<number, number>;
  /** The outcome of each bet's (last) BetSettled. */
  readonly outcomes: Map<number, 'won' | 'lost'>;
  /** BetRejected and RollbackRequested events. */
  readonly other: number;
}

/** Counts settlement's events among `events` (wallet-transactions in log order). */
export function tallySettlements(events: readonly WalletEvent[]): SettlementTally {
  const settled = new Map<number, number>();
  const outcomes = new Map<number, 'won' | 'lost'>();
  let other = 0;
  for (const x of events) {
    if (x.type === 'BetSettled') {
      settled.set(x.value.tx_id, (settled.get(x.value.tx_id) ?? 0) + 1);
      outcomes.set(x.value.tx_id, x.value.outcome);
    } else if (x.type === 'BetRejected' || x.type === 'RollbackRequested') other += 1;
  }
  return { settled, outcomes, other };
}

/** Test environment with the rounds and wallet-transactions topics. */
export interface WalletTestEnv extends TestEnv {
  readonly walletTopic: string;
  /** Appends events of one bet's player in order. */
  append(bet: BetContext, events: readonly WalletEvent[]): Promise<void>;
  appendRounds(rounds: readonly RoundFinished[]): Promise<void>;
  /** Appends any events of `rounds` (lifecycle, cash-outs, finished rounds) in order. */
  appendRoundEvents(events: readonly RoundEvent[]): Promise<void>;
  /** Every event of wallet-transactions up to its high-water mark now. */
  readWallet(): Promise<WalletEvent[]>;
}

/** Creates an isolated environment; `overrides` go to loadConfig. */
export async function createWalletTestEnv(
  name: string,
  overrides: Record<string, string> = {},
): Promise<WalletTestEnv> {
  const id = randomBytes(4).toString('hex');
  // base.env holds these settings too, for child processes.
  const base = await createTestEnv(name, { SETTLEMENT_GROUP: `t-${name}-${id}-settlement`, ...overrides });
  const admin = base.kafka.admin();
  await admin.connect();
  await ensureTopics(admin, base.config, ['walletTransactions']);
  await admin.disconnect();
  const walletTopic = topicName(base.config, 'walletTransactions');
  return {
    ...base,
    walletTopic,
    append: (bet, events) => appendWalletEvents(base.producer, base.config, walletKey(bet), events),
    async appendRounds(rounds) {
      await base.producer.send({
        topic: base.topic,
        acks: -1,
        messages: rounds.map(roundMessage),
      });
    },
    async appendRoundEvents(events) {
      await base.producer.send({
        topic: base.topic,
        acks: -1,
        messages: events.map((e) => ({ key: e.game_slug, value: encodeRoundEvent(e) })),
      });
    },
    async readWallet() {
      const out: WalletEvent[] = [];
      const from = new Map(Array.from({ length: base.config.kafka.partitions }, (_, p) => [p, 0n]));
      await readRange(base.kafka, walletTopic, from, (r) => {
        out.push(decodeWalletEvent(r.message.value));
      });
      return out;
    },
    // base.close() deletes wallet-transactions with the namespace's other topics.
  };
}
