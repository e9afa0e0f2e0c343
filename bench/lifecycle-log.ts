/**
 * The benchmark's own reader of a run's `rounds` topic (bench/lifecycle.ts): follows it live from
 * the beginning with a consumer group of the run's namespace, and keeps what the measures need —
 * crash's current phase (rules/rounds/lifecycle.ts evolvePhase, as the API folds it), every
 * BetCashedOut by bet (its append time, LogAppendTime, and the engine's decision time), and the
 * append time of every lifecycle record and finished round (to count what watchers should get).
 */
import type { Consumer, Kafka } from 'kafkajs';
import { decodeRoundEvent } from '../lib/log/rounds-codec.ts';
import { evolvePhase, type Phase } from '../rules/rounds/lifecycle.ts';
import type { Kind } from './lifecycle-messages.ts';

/** A cash-out decision as found on the log. */
export interface LoggedCashOut {
  readonly roundId: number;
  readonly multiplier: string;
  /** The engine's clock when it decided, Unix ms. */
  readonly decidedAt: number;
  /** The record's append time (LogAppendTime), Unix ms. */
  readonly appendedAt: number;
}

const KIND_OF = {
  RoundOpened: 'round-opened',
  BettingClosed: 'betting-closed',
  RoundFinished: 'round',
} as const;

export interface RoundsFollower {
  /** Crash's current phase as the log tells it (undefined before its first record). */
  phase(): Phase | undefined;
  /** The cash-out decision of bet `txId`, once its record is read. */
  cashOut(txId: number): LoggedCashOut | undefined;
  /** Records of each kind appended in [from, to) (Unix ms). */
  countAppended(from: number, to: number): Record<Kind, number>;
  /** Resolves with the phase once `accept(phase)` holds. @throws after `timeoutMs`. */
  until(
    what: string,
    accept: (p: Phase | undefined) => boolean,
    timeoutMs: number,
  ): Promise<Phase | undefined>;
  stop(): Promise<void>;
}

/** Starts following `topic` with group `groupId` (from its first record). */
export async function followRounds(kafka: Kafka, topic: string, groupId: string): Promise<RoundsFollower> {
  let phase: Phase | undefined;
  const cashOuts = new Map<number, LoggedCashOut>();
  const appended: { kind: Kind; at: number }[] = [];
  const waiters = new Set<() => void>();
  const consumer: Consumer = kafka.consumer({ groupId, maxWaitTimeInMs: 20 });
  await consumer.connect();
  await consumer.subscribe({ topic, fromBeginning: true });
  await consumer.run({
    eachMessage: async ({ message }) => {
      const e = decodeRoundEvent(message.value);
      if (e.game_slug !== 'crash') return;
      const at = Number(message.timestamp);
      if (e.type === 'BetCashedOut')
        cashOuts.set(e.tx_id, {
          roundId: e.round_id,
          multiplier: e.multiplier,
          decidedAt: e.at,
          appendedAt: at,
        });
      else appended.push({ kind: KIND_OF[e.type], at });
      phase = evolvePhase(phase, e);
      for (const w of waiters) w();
    },
  });
  return {
    phase: () => phase,
    cashOut: (txId) => cashOuts.get(txId),
    countAppended(from, to) {
      const n: Record<Kind, number> = { 'round-opened': 0, 'betting-closed': 0, round: 0 };
      for (const a of appended) if (a.at >= from && a.at < to) n[a.kind]++;
      return n;
    },
    until(what, accept, timeoutMs) {
      return new Promise((resolve, reject) => {
        const check = () => {
          if (!accept(phase)) return;
          clearTimeout(timer);
          waiters.delete(check);
          resolve(phase);
        };
        const timer = setTimeout(() => {
          waiters.delete(check);
          reject(new Error(`timed out after ${timeoutMs} ms waiting for ${what}`));
        }, timeoutMs);
        waiters.add(check);
        check();
      });
    },
    async stop() {
      await consumer.disconnect();
    },
  };
}
