/**
 * The figures of one wallet scenario, from the bench's tracker (wallet-track.ts: event times and
 * their records' broker append times) joined with two times the log does not hold, read once
 * after the scenario: when the saga stored each win or close callback (wallet_callbacks.created_at,
 * the saga consumer's clock as it wrote the BetSettled's batch) and when the sandbox booked it
 * (its ledger's transactions.created_at: Postgres' now() of the sandbox's own transaction, as
 * the request reached its ledger). Every clock is this machine's.
 *
 * "Round end" is the RoundFinished record's append time (the broker's, LogAppendTime), the moment
 * settlement can know the result; "win credit at the operator" is the sandbox's booking.
 */
import { winTxId } from '../rules/money/money.ts';
import { type LatencySummary, latencySummary } from './lib.ts';
import type { WalletStack } from './wallet-stack.ts';
import { type BetTrack, type BetTracker, endOf } from './wallet-track.ts';

export interface ScenarioFigures {
  readonly placed: number;
  readonly won: number;
  readonly lost: number;
  /** Debit refused or failed at the operator (compensated by a rollback when it may have moved money). */
  readonly rejected: number;
  /** Appended after its round's BettingClosed: cancelled by settlement, refunded. */
  readonly cancelled: number;
  /** BetRejected codes (the saga's refusals and settlement's ROUND_CLOSED / INVALID_BET) and their counts. */
  readonly rejections: Readonly<Record<string, number>>;
  /** Bets still going on when the drain timeout passed. */
  readonly unfinished: number;
  /** Won and credited, or lost and closed ("settled" in the wallet benchmark's figures). */
  readonly settled: number;
  /** Wins and closes acknowledged only after a retry; and those parked. */
  readonly retried: number;
  readonly parked: number;
  /** Wins whose debit was acknowledged after their round's end (settled only then). */
  readonly lateDebits: number;
  /** Bets accepted per second over the placement time. */
  readonly betsPerS: number;
  /** Bets settled per second, counted over the placement time after the warm-up. */
  readonly settledPerS: number;
  /** Settled bets over the time from the first placement to the last settlement, per second. */
  readonly settledPerSOverall: number;
  readonly latency: Readonly<Record<string, LatencySummary>>;
  /**
   * Round end → win credit at the operator, hop by hop: for wins whose debit was acknowledged
   * before their round ended, and apart for the others (their settlement waited for the debit).
   */
  readonly hops: Readonly<Record<string, LatencySummary>>;
  /** POST /play/bets → debit acknowledged, hop by hop (every bet). */
  readonly betHops: Readonly<Record<string, LatencySummary>>;
}

/** When the placement ran and from when settled bets count (Unix ms). */
export interface Span {
  readonly startedAt: number;
  readonly endedAt: number;
  readonly steadyFrom: number;
}

/** Reads the saga's and the sandbox's times of the callbacks `txIds`, Unix ms by tx id. */
async function callbackTimes(
  stack: WalletStack,
  txIds: readonly number[],
): Promise<{ stored: Map<number, number>; booked: Map<number, number> }> {
  const { sql } = stack;
  const ids = txIds.map(String);
  const stored = await sql<{ tx: string; at: string }[]>`
    select tx_id::text as tx, created_at::text as at from wallet_callbacks where tx_id = any(${ids}::bigint[])`;
  const booked = await sql<{ tx: string; at: number }[]>`
    select provider_tx_id as tx, (extract(epoch from created_at) * 1000)::float8 as at
    from ${sql(stack.sandboxSchema)}.transactions where kind = 'win' and provider_tx_id = any(${ids}::text[])`;
  return {
    stored: new Map(stored.map((r) => [Number(r.tx), Number(r.at)])),
    booked: new Map(booked.map((r) => [Number(r.tx), r.at])),
  };
}

/** The figures of the bets `txIds` placed during `span`. */
export async function scenarioFigures(
  stack: WalletStack,
  tracker: BetTracker,
  txIds: readonly number[],
  span: Span,
): Promise<ScenarioFigures> {
  const all = txIds.map((tx) => [tx, tracker.bet(tx)] as const);
  const done = all.filter(([, b]) => tracker.finishedAt(b) !== undefined);
  const settled = all.filter(([, b]) => tracker.isSettled(b));
  const count = (end: string) => done.filter(([, b]) => endOf(b) === end).length;
  const legs = settled.flatMap(([tx, b]) => {
    const kind = tracker.legOf(b);
    const leg = kind === 'none' ? undefined : b[kind];
    return leg ? [{ tx, b, kind, leg }] : [];
  });
  const times = await callbackTimes(
    stack,
    legs.map((l) => winTxId(l.tx)),
  );
  const roundEnd = (b: BetTrack) => (b.gameRound ? tracker.roundsFinished.get(b.gameRound) : undefined);

  /** Durations over `of` of `pick` (skipping bets where it is undefined). */
  const over = <T>(of: readonly T[], pick: (x: T) => number | undefined) =>
    latencySummary(of.flatMap((x) => (pick(x) === undefined ? [] : [pick(x) as number])));
  const wins = legs.filter((l) => l.kind === 'win');
  // A win settles only once its debit is acknowledged: those whose debit came after the round's
  // end are shown apart, so the hops of the others are the pipeline's own.
  const isLate = (l: (typeof legs)[number]) =>
    (l.b.debit?.at ?? 0) > (roundEnd(l.b)?.appendedAt ?? Number.POSITIVE_INFINITY);
  const late = wins.filter(isLate);
  const onTime = wins.filter((l) => !isLate(l));
  const closes = legs.filter((l) => l.kind === 'close');
  const fromEnd = (l: (typeof legs)[number], t: number | undefined) => {
    const end = roundEnd(l.b);
    return end && t !== undefined ? t - end.appendedAt : undefined;
  };
  const booked = (l: (typeof legs)[number]) => times.booked.get(winTxId(l.tx));
  const stored = (l: (typeof legs)[number]) => times.stored.get(winTxId(l.tx));
  const diff = (a: number | undefined, b: number | undefined) =>
    a === undefined || b === undefined ? undefined : b - a;

  const finish = (b: BetTrack) => tracker.finishedAt(b) as number;
  const inSteady = settled.filter(([, b]) => finish(b) >= span.steadyFrom && finish(b) <= span.endedAt);
  const firstPost = Math.min(...all.map(([, b]) => b.postAt ?? Number.POSITIVE_INFINITY));
  const lastSettled = Math.max(...settled.map(([, b]) => finish(b)));
  return {
    placed: all.length,
    won: count('won'),
    lost: count('lost'),
    rejected: count('rejected'),
    cancelled: count('cancelled'),
    rejections: all.reduce<Record<string, number>>((m, [, b]) => {
      if (b.rejected) m[b.rejected.code] = (m[b.rejected.code] ?? 0) + 1;
      return m;
    }, {}),
    unfinished: all.length - done.length,
    settled: settled.length,
    retried: legs.filter((l) => l.leg.attempts > 1).length,
    parked: done.filter(([, b]) => b.win?.parked || b.close?.parked).length,
    lateDebits: late.length,
    betsPerS: all.length / ((span.endedAt - span.startedAt) / 1000),
    settledPerS: inSteady.length / ((span.endedAt - span.steadyFrom) / 1000),
    settledPerSOverall: settled.length / ((lastSettled - firstPost) / 1000),
    latency: {
      'bet → 202 from the API': over(all, ([, b]) => diff(b.postAt, b.acceptedAt)),
      'bet → debit acknowledged': over(all, ([, b]) =>
        b.debit?.outcome === 'debited' ? diff(b.postAt, b.debit.at) : undefined,
      ),
      'round end → win booked at the operator': over(wins, (l) => fromEnd(l, booked(l))),
      'round end → win acknowledged to the saga': over(wins, (l) => fromEnd(l, l.leg.at)),
      'round end → round close booked at the operator': over(closes, (l) => fromEnd(l, booked(l))),
    },
    hops: {
      'engine: finished_at → RoundFinished appended': over(onTime, (l) => {
        const end = roundEnd(l.b);
        return end && end.appendedAt - end.finishedAt;
      }),
      'settlement: RoundFinished appended → BetSettled appended': over(onTime, (l) =>
        fromEnd(l, l.b.settled?.appendedAt),
      ),
      'saga consumer: BetSettled appended → win callback stored': over(onTime, (l) =>
        diff(l.b.settled?.appendedAt, stored(l)),
      ),
      'saga dispatcher: stored → booked at the sandbox': over(onTime, (l) => diff(stored(l), booked(l))),
      'sandbox → saga: booked → answer read (CallbackSucceeded.at)': over(onTime, (l) =>
        diff(booked(l), l.leg.at),
      ),
      'saga outbox: answer read → CallbackSucceeded appended': over(onTime, (l) =>
        diff(l.leg.at, l.leg.appendedAt),
      ),
      'total, debit before round end: RoundFinished appended → booked': over(onTime, (l) =>
        fromEnd(l, booked(l)),
      ),
      'late debit: RoundFinished appended → debit acknowledged': over(late, (l) => fromEnd(l, l.b.debit?.at)),
      'total, late debits: RoundFinished appended → booked at the sandbox': over(late, (l) =>
        fromEnd(l, booked(l)),
      ),
    },
    betHops: {
      'client → API handler (BetPlaced.placed_at)': over(all, ([, b]) => diff(b.postAt, b.placed?.at)),
      'API: handler → BetPlaced appended': over(all, ([, b]) => diff(b.placed?.at, b.placed?.appendedAt)),
      'API → client: BetPlaced appended → 202 received': over(all, ([, b]) =>
        diff(b.placed?.appendedAt, b.acceptedAt),
      ),
      'saga: BetPlaced appended → debit acknowledged': over(all, ([, b]) =>
        b.debit?.outcome === 'debited' ? diff(b.placed?.appendedAt, b.debit.at) : undefined,
      ),
    },
  };
}
