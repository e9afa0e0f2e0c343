/**
 * The end-to-end part of bench/wallet.ts: players launched through POST /games/request-access and
 * /play/open bet back to back through POST /play/bets (each waits for its 202, not for the
 * settlement); the wallet saga debits at the operator sandbox, settlement joins the bets with
 * RoundFinished, the saga credits the wins. A consumer of `wallet-transactions` and `rounds` (its
 * own group) follows every bet to its end (wallet-track.ts) and the figures come from the events'
 * own times.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import type { Consumer } from 'kafkajs';
import { decodeRound } from '../lib/log/rounds-codec.ts';
import { topicName } from '../lib/log/topics.ts';
import { decodeWalletEvent } from '../lib/log/wallet-events.ts';
import { planBet } from '../services/bots/plan.ts';
import { waitFor } from '../tests/support/poll.ts';
import { newPlayer, placeBet } from '../tests/support/wallet-players.ts';
import { type LatencySummary, latencySummary } from './lib.ts';
import type { WalletStack } from './wallet-stack.ts';
import { type BetTracker, endOf, finishedAt } from './wallet-track.ts';

export interface E2eOptions {
  /** Prefix of the players' user ids (one set of players per scenario). */
  readonly label: string;
  readonly game: 'crash' | 'double' | 'slot' | 'wall-street';
  readonly players: number;
  readonly betsPerPlayer: number;
  /** Pause between one player's bets, ms (0: back to back, the pipeline's saturation). */
  readonly pauseMs: number;
  /** How long to wait for every bet to finish after the last placement, ms. */
  readonly drainTimeoutMs: number;
}

/** p50/p99/max of one latency, ms. */
export type Latency = LatencySummary;

export interface E2eResult {
  readonly placed: number;
  readonly placementErrors: number;
  readonly firstPlacementError: string | null;
  readonly won: number;
  readonly lost: number;
  /** Debit refused or failed at the operator (compensated by a rollback when it may have moved money). */
  readonly rejected: number;
  /** Round finished before the bet was placed (read model behind the engine): cancelled, refunded. */
  readonly cancelled: number;
  readonly winsRetried: number;
  readonly winsParked: number;
  /** Bets still going on when the drain timeout passed. */
  readonly unfinished: number;
  /** Won with the win acknowledged, or lost. */
  readonly settled: number;
  /** From the first placement to the last settled bet's end, ms. */
  readonly elapsedMs: number;
  readonly settledPerS: number;
  readonly placedPerS: number;
  /** Callbacks the operator acknowledged (debits, wins, rollbacks) per second over `elapsedMs`. */
  readonly callbacksPerS: number;
  readonly latency: Readonly<Record<string, Latency>>;
}

/** A consumer feeding `tracker` from the beginning of both topics. */
export async function startCollector(stack: WalletStack, tracker: BetTracker): Promise<Consumer> {
  const walletTopic = topicName(stack.config, 'walletTransactions');
  const roundsTopic = topicName(stack.config, 'rounds');
  const consumer = stack.kafka.consumer({ groupId: `${stack.ns}bench-collector`, maxWaitTimeInMs: 20 });
  await consumer.connect();
  await consumer.subscribe({ topics: [walletTopic, roundsTopic], fromBeginning: true });
  await consumer.run({
    autoCommit: true,
    // One batch at a time and synchronously: events one producer.send appended together (e.g.
    // BetRejected + RollbackRequested) are applied before anyone looks at the tracker again.
    eachBatch: async ({ batch }) => {
      for (const m of batch.messages) {
        try {
          if (batch.topic === roundsTopic) tracker.round(decodeRound(m.value));
          else tracker.apply(decodeWalletEvent(m.value));
        } catch {
          // Not ours to judge: an undecodable record is skipped by every consumer of the project.
        }
      }
    },
  });
  return consumer;
}

/** Runs one scenario on a running stack whose collector feeds `tracker`. */
export async function runPlayers(stack: WalletStack, tracker: BetTracker, o: E2eOptions): Promise<E2eResult> {
  // request-access as the operator, then the one-time open as the browser would.
  const players = await Promise.all(
    Array.from({ length: o.players }, (_, i) =>
      newPlayer(stack.apiUrl, stack.operatorToken, `${o.label}-${i + 1}`, o.game, {
        currency: 'USD',
        expires_in_minutes: 60,
      }),
    ),
  );
  const mine: number[] = [];
  let placementErrors = 0;
  let firstPlacementError: string | null = null;
  await Promise.all(
    players.map(async (player) => {
      for (let i = 0; i < o.betsPerPlayer; i++) {
        const postAt = Date.now();
        try {
          const r = await placeBet(stack.apiUrl, player, { ...planBet(o.game, Math.random) });
          if (r.status !== 202)
            throw new Error(`POST /play/bets: HTTP ${r.status} ${JSON.stringify(r.body).slice(0, 200)}`);
          const b = tracker.bet(r.body.tx_id);
          b.postAt = postAt;
          b.acceptedAt = Date.now();
          mine.push(r.body.tx_id);
        } catch (err) {
          placementErrors += 1;
          firstPlacementError ??= (err as Error).message;
        }
        if (o.pauseMs > 0) await sleep(o.pauseMs);
      }
    }),
  );
  const bets = () => mine.map((tx) => tracker.bet(tx));
  await waitFor(
    `every bet of ${o.label} to finish`,
    () => (bets().every((b) => finishedAt(b) !== undefined) ? true : undefined),
    o.drainTimeoutMs,
    50,
  ).catch((err: unknown) => console.warn(`warning: ${(err as Error).message}; reporting what finished`));

  const all = bets();
  const done = all.filter((b) => finishedAt(b) !== undefined);
  const count = (end: string) => done.filter((b) => endOf(b) === end).length;
  const settledBets = done.filter((b) => endOf(b) === 'lost' || (endOf(b) === 'won' && !b.win?.parked));
  const t0 = Math.min(...all.map((b) => b.postAt as number));
  const tEnd = Math.max(...settledBets.map((b) => finishedAt(b) as number));
  const tPlaced = Math.max(...all.map((b) => b.acceptedAt as number));
  const wins = settledBets.filter((b) => b.win && !b.win.parked);
  const from = (pick: (b: (typeof all)[number]) => number | undefined, of = all) =>
    of.flatMap((b) => {
      const t = pick(b);
      return t === undefined || b.postAt === undefined ? [] : [t - b.postAt];
    });
  const roundEndToWin = wins.flatMap((b) => {
    const f = b.gameRound ? tracker.roundsFinished.get(b.gameRound) : undefined;
    return f === undefined || !b.win ? [] : [b.win.at - f];
  });
  const acked = done.reduce(
    (n, b) =>
      n +
      (b.debit?.outcome === 'debited' ? 1 : 0) +
      (b.win && !b.win.parked ? 1 : 0) +
      (b.rollbackDone && !b.rollbackDone.parked ? 1 : 0),
    0,
  );
  return {
    placed: all.length,
    placementErrors,
    firstPlacementError,
    won: count('won'),
    lost: count('lost'),
    rejected: count('rejected'),
    cancelled: count('cancelled'),
    winsRetried: done.filter((b) => (b.win?.attempts ?? 1) > 1).length,
    winsParked: done.filter((b) => b.win?.parked).length,
    unfinished: all.length - done.length,
    settled: settledBets.length,
    elapsedMs: tEnd - t0,
    settledPerS: settledBets.length / ((tEnd - t0) / 1000),
    placedPerS: all.length / ((tPlaced - t0) / 1000),
    callbacksPerS: acked / ((tEnd - t0) / 1000),
    latency: {
      'bet → 202 from the API': latencySummary(from((b) => b.acceptedAt)),
      'bet → debit acknowledged': latencySummary(
        from((b) => (b.debit?.outcome === 'debited' ? b.debit.at : undefined)),
      ),
      'bet → BetSettled': latencySummary(from((b) => b.settled?.at, settledBets)),
      'bet → win credit acknowledged': latencySummary(from((b) => b.win?.at, wins)),
      'round end → win credit acknowledged': latencySummary(roundEndToWin),
    },
  };
}
