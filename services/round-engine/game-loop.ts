/**
 * One game's loop of rounds (docs/architecture.md "Round lifecycle"): append RoundOpened, wait out
 * the betting window, append BettingClosed, then (crash) fly until the bust while deciding manual
 * cash-outs, or (the others) wait the fixed draw, and append RoundFinished; the next round opens at
 * once. Every append of a game goes through one lane, in order, so a cash-out decided during a
 * flight always stands before its round's RoundFinished in the log.
 *
 * Nothing observable before BettingClosed depends on the result: the window's length is the
 * game's, RoundOpened carries no result, and the result phase starts only after BettingClosed.
 *
 * After a restart the round found open in the log (RoundOpened and maybe BettingClosed, no
 * RoundFinished) is resumed, not opened again: the result is the chain's, so it is the same round.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import type { Logger } from '../../lib/logger.ts';
import type { GameSlug } from '../../rules/games/catalog.ts';
import { type ChainSource, evolve, finish, type GameState, nextRound } from '../../rules/rounds/decider.ts';
import {
  bettingMsOf,
  bustAt,
  closeBetting,
  decideCashOut,
  type Flight,
  openRound,
  resultDelayMs,
} from '../../rules/rounds/lifecycle.ts';
import type { RoundEvent, RoundOpened } from '../../rules/rounds/round.ts';
import type { Appender } from './appender.ts';
import type { OpenRound } from './log-tail.ts';

/** What the engine answers a cash-out request with. */
export type CashOutAnswer =
  | { readonly status: 'accepted'; readonly multiplier: string; readonly at: number }
  | { readonly status: 'crashed' }
  | { readonly status: 'not-flying' };

/** One game's ordered appends, its flight in progress and the cash-outs decided during it. */
export class GameLane {
  private chain: Promise<unknown> = Promise.resolve();
  private flight: Flight | null = null;
  private decided = new Map<number, Promise<CashOutAnswer>>();
  /** The last state appended (RoundFinished folded in). */
  state: GameState;

  constructor(
    readonly slug: GameSlug,
    private readonly appender: Appender,
    state: GameState,
    private readonly signal: AbortSignal,
  ) {
    this.state = state;
  }

  /** Appends `event` after every event enqueued before it. @returns once it is in the log. */
  append(event: RoundEvent): Promise<void> {
    const p = this.chain.then(() => this.appender.append(event, this.signal));
    this.chain = p.catch(() => {});
    return p;
  }

  /** Starts deciding cash-outs of `f` (after its BettingClosed is in the log). */
  fly(f: Flight): void {
    this.flight = f;
    this.decided = new Map();
  }

  /** Stops deciding cash-outs: the flight has reached its bust. */
  land(): void {
    this.flight = null;
  }

  /**
   * Decides a manual cash-out of bet `txId` on round `roundId` at `now` (the engine's clock when the
   * request arrived) and, when accepted, appends BetCashedOut. The same bet asked twice during a
   * flight gets the first answer.
   */
  cashOut(roundId: number, txId: number, now: number): Promise<CashOutAnswer> {
    const f = this.flight;
    if (!f || f.roundId !== roundId) return Promise.resolve({ status: 'not-flying' });
    const prior = this.decided.get(txId);
    if (prior) return prior;
    const d = decideCashOut(f, txId, now);
    const answer: Promise<CashOutAnswer> = d.accepted
      ? this.append(d.event).then(() => ({
          status: 'accepted',
          multiplier: d.event.multiplier,
          at: d.event.at,
        }))
      : Promise.resolve({ status: 'crashed' });
    this.decided.set(txId, answer);
    return answer;
  }
}

export interface GameLoopDeps {
  readonly lane: GameLane;
  readonly chains: ChainSource;
  /** Betting windows per game (ms at speed 1) configured by ROUND_BETTING_MS. */
  readonly bettingMs: Readonly<Partial<Record<GameSlug, number>>>;
  readonly speed: number;
  readonly clock: () => number;
  readonly signal: AbortSignal;
  readonly log: Logger;
  /** The round found open in the log at start, resumed instead of opened again. */
  readonly open?: OpenRound;
  /** Waits `ms` (node:timers/promises by default; tests drive a virtual clock). */
  readonly sleep?: (ms: number, signal: AbortSignal) => Promise<unknown>;
}

/** Runs rounds of one game until `signal` aborts (then resolves). @throws what an append or the rules throw. */
export async function runGameLoop(deps: GameLoopDeps): Promise<void> {
  const { lane, clock, signal, log } = deps;
  // Timers may fire a ms before the clock reads `t`: wait until it does, so BettingClosed is never
  // before the announced close and a flight never lands before its bust.
  const wait = deps.sleep ?? ((ms: number, s: AbortSignal) => sleep(ms, undefined, { signal: s }));
  const until = async (t: number) => {
    while (clock() < t) await wait(t - clock(), signal);
  };
  let resume = deps.open;
  while (!signal.aborted) {
    try {
      const pending = nextRound(lane.state, deps.chains);
      let opened: RoundOpened;
      let closedAt: number | null = null;
      if (resume && resume.opened.round_id === pending.round.round_id) {
        ({ opened, closedAt } = resume);
        log.info({ round_id: opened.round_id, closedAt }, 'resuming the round open in the log');
      } else {
        if (resume)
          log.warn(
            { found: resume.opened.round_id, next: pending.round.round_id },
            'open round not resumable',
          );
        opened = openRound(pending, clock(), bettingMsOf(lane.slug, deps.bettingMs), deps.speed);
        await lane.append(opened);
      }
      resume = undefined;
      if (closedAt === null) {
        await until(opened.betting_closes_at);
        const closed = closeBetting(opened, clock());
        await lane.append(closed);
        closedAt = closed.at;
      }
      let finishAt = closedAt + resultDelayMs(pending, opened.speed);
      if (pending.round.result.game === 'crash') {
        const flight: Flight = {
          roundId: opened.round_id,
          game: lane.slug,
          startedAt: closedAt,
          speed: opened.speed,
          point: pending.round.result.point,
        };
        lane.fly(flight);
        finishAt = bustAt(flight);
      }
      await until(finishAt);
      lane.land();
      const round = finish(pending, clock());
      await lane.append(round);
      lane.state = evolve(lane.state, round);
      log.debug({ round_id: round.round_id, result: round.result }, 'round finished');
    } catch (err) {
      if (signal.aborted) return;
      throw err;
    }
  }
}
