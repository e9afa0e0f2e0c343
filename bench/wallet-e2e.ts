/**
 * The end-to-end part of bench/wallet.ts: players launched through POST /games/request-access and
 * /play/open bet through POST /play/bets inside betting windows, paced or saturated
 * (wallet-pacing.ts); the wallet saga debits at the operator sandbox, settlement joins the bets with
 * RoundFinished, the saga credits the wins and closes the lost bets' rounds. A consumer of
 * `wallet-transactions` and `rounds` (its own group) follows every bet to its end (wallet-track.ts)
 * and tells the players the windows; the figures come from the events' own times, their records'
 * broker append times and the sandbox ledger's booking times (wallet-figures.ts).
 */
import { setTimeout as sleep } from 'node:timers/promises';
import type { Consumer } from 'kafkajs';
import { decodeRoundEvent } from '../lib/log/rounds-codec.ts';
import { topicName } from '../lib/log/topics.ts';
import { decodeWalletEvent } from '../lib/log/wallet-events.ts';
import type { GameSlug } from '../rules/games/catalog.ts';
import { planBet } from '../services/bots/plan.ts';
import { newPlayer } from '../tests/support/wallet-players.ts';
import { type ScenarioFigures, scenarioFigures } from './wallet-figures.ts';
import { type Pace, runPace } from './wallet-pacing.ts';
import type { WalletStack } from './wallet-stack.ts';
import type { BetTracker } from './wallet-track.ts';
import { type UsageDelta, type UsageSnapshot, usageDelta, usageSnapshot } from './wallet-usage.ts';
import { PlacementStats, placeInWindow, type RoundWindows } from './wallet-windows.ts';

export interface ScenarioOptions {
  /** Prefix of the players' user ids (one set of players per scenario). */
  readonly label: string;
  readonly game: GameSlug;
  readonly players: number;
  readonly pace: Pace;
  /** How long bets are placed, s. */
  readonly seconds: number;
  /** Settled bets are counted from this long after the first window's opening, s. */
  readonly warmupS: number;
  /** How long to wait for every bet to finish after the last placement, ms. */
  readonly drainTimeoutMs: number;
}

export interface ScenarioResult extends ScenarioFigures {
  readonly label: string;
  readonly pace: Pace;
  /** 409 BETTING_CLOSED answers waited out. */
  readonly waits: number;
  /** Bets whose wait for a window outlasted the placement time (not sent again). */
  readonly dropped: number;
  /** Paced bets not sent because `maxOpen` bets were unfinished. */
  readonly skipped: number;
  readonly placementErrors: number;
  readonly firstPlacementError: string | null;
  /** CPU and machine load over the scenario. */
  readonly usage: UsageDelta;
}

/** A consumer feeding `tracker` and `windows` from the beginning of both topics. */
export async function startCollector(
  stack: WalletStack,
  tracker: BetTracker,
  windows: RoundWindows,
): Promise<Consumer> {
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
        // Both topics use LogAppendTime: the record's timestamp is the broker's append time.
        const appendedAt = Number(m.timestamp);
        try {
          if (batch.topic === roundsTopic) {
            const e = decodeRoundEvent(m.value);
            windows.apply(e);
            tracker.round(e, appendedAt);
          } else tracker.apply(decodeWalletEvent(m.value), appendedAt);
        } catch {
          // Not ours to judge: an undecodable record is skipped by every consumer of the project.
        }
      }
    },
  });
  return consumer;
}

/** Runs one scenario on a running stack whose collector feeds `tracker` and `windows`. */
export async function runScenario(
  stack: WalletStack,
  tracker: BetTracker,
  windows: RoundWindows,
  o: ScenarioOptions,
): Promise<ScenarioResult> {
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
  const open = new Set<number>();
  let posting = 0;
  const stats = new PlacementStats();
  const sweep = setInterval(() => {
    for (const tx of open) if (tracker.finishedAt(tracker.bet(tx)) !== undefined) open.delete(tx);
  }, 20);
  const before: UsageSnapshot = await usageSnapshot(stack);
  let span: { startedAt: number; endedAt: number; skipped: number };
  try {
    span = await runPace(o.pace, o.seconds, {
      players,
      windows,
      open: () => open.size + posting,
      async place(player, deadline) {
        posting += 1;
        try {
          const body = { ...planBet(o.game, Math.random) };
          const a = await placeInWindow(stack.apiUrl, player, body, windows, stats, deadline);
          if (!a) return undefined;
          const b = tracker.bet(a.txId);
          b.postAt = a.postAt;
          b.acceptedAt = a.acceptedAt;
          mine.push(a.txId);
          open.add(a.txId);
          return a.txId;
        } finally {
          posting -= 1;
        }
      },
      async debitAnswered(txId) {
        const b = tracker.bet(txId);
        const giveUp = Date.now() + o.drainTimeoutMs;
        while (!b.debit && !b.rejected && Date.now() < giveUp) await sleep(10);
      },
    });
    const drainBy = Date.now() + o.drainTimeoutMs;
    while (open.size > 0 && Date.now() < drainBy) await sleep(50);
    if (open.size > 0)
      console.warn(
        `warning: ${open.size} bets of ${o.label} unfinished after the drain; reporting what finished`,
      );
  } finally {
    clearInterval(sweep);
  }
  const usage = usageDelta(before, await usageSnapshot(stack));
  const figures = await scenarioFigures(stack, tracker, mine, {
    startedAt: span.startedAt,
    endedAt: span.endedAt,
    steadyFrom: span.startedAt + o.warmupS * 1000,
  });
  return {
    label: o.label,
    pace: o.pace,
    waits: stats.waits,
    dropped: stats.dropped,
    skipped: span.skipped,
    placementErrors: stats.errors,
    firstPlacementError: stats.firstError,
    usage,
    ...figures,
  };
}
