/**
 * The lifecycle of a round as pure rules (docs/architecture.md "Round lifecycle"):
 *   RoundOpened (betting window) → BettingClosed → RoundFinished, all keyed by game slug,
 * and, for crash, the flight between BettingClosed and RoundFinished with its manual cash-outs.
 *
 * Nothing the lifecycle shows before BettingClosed depends on the result: the window's length is
 * the game's (or its configured) betting time, and RoundOpened carries only the round's id, chain
 * position and commitment. The result decides only how long the result phase lasts.
 *
 * Times are Unix ms given by the caller (no clock here); lengths are ms at speed 1, divided by
 * the engine's speed (ROUND_SPEED).
 */

import type { GameSlug } from '../games/catalog.ts';
import { centsToMultiplier, crashFlightMs, multiplierCentsAt, pointCents } from '../games/crash.ts';
import { rulesOf } from '../games/index.ts';
import type { PendingRound } from './decider.ts';
import type { BetCashedOut, BettingClosed, RoundEvent, RoundOpened } from './round.ts';

/**
 * The betting window of `pending`, opened at `now`: `bettingMs` (ms at speed 1) divided by `speed`.
 * @throws RangeError for a non-positive speed or window.
 */
export function openRound(pending: PendingRound, now: number, bettingMs: number, speed: number): RoundOpened {
  if (!(speed > 0) || !(bettingMs > 0))
    throw new RangeError(`betting window ${bettingMs} ms at speed ${speed}`);
  const { round } = pending;
  const proof = round.proof;
  return {
    type: 'RoundOpened',
    round_id: round.round_id,
    game_id: round.game_id,
    game_slug: round.game_slug,
    game_type: round.game_type,
    betting_opens_at: now,
    betting_closes_at: now + Math.round(bettingMs / speed),
    chain_epoch: proof?.chain_epoch ?? 0,
    chain_index: proof?.chain_index ?? 0,
    commitment: proof?.commitment ?? '',
    speed,
  };
}

/** The end of `opened`'s betting window, at `now`. */
export function closeBetting(opened: RoundOpened, now: number): BettingClosed {
  return {
    type: 'BettingClosed',
    round_id: opened.round_id,
    game_id: opened.game_id,
    game_slug: opened.game_slug,
    at: now,
  };
}

/** ms from BettingClosed to RoundFinished at `speed` (a crash flight until the point; a fixed draw otherwise). */
export function resultDelayMs(pending: PendingRound, speed: number): number {
  return Math.ceil(pending.resultMs / speed);
}

/** Betting window of `game` at speed 1, ms: `overrides[game]` when configured, else the game's default. */
export function bettingMsOf(
  game: GameSlug,
  overrides: Readonly<Partial<Record<GameSlug, number>>> = {},
): number {
  return overrides[game] ?? rulesOf(game).bettingMs;
}

/** A crash flight in progress: when it started (BettingClosed.at), its speed and its secret point. */
export interface Flight {
  readonly roundId: number;
  readonly game: GameSlug;
  /** Unix ms (BettingClosed.at). */
  readonly startedAt: number;
  readonly speed: number;
  /** The crash point, decimal string; known to the engine only until RoundFinished. */
  readonly point: string;
}

/** The multiplier a flight shows at `now`, floored to the cent (decimal string); "1.00" before it starts. */
export function flightMultiplier(f: Pick<Flight, 'startedAt' | 'speed'>, now: number): string {
  return centsToMultiplier(multiplierCentsAt(Math.max(0, (now - f.startedAt) * f.speed)));
}

/** The Unix ms at which `f` busts: startedAt + ceil(ln(point) / 0.00006) / speed. */
export function bustAt(f: Flight): number {
  return f.startedAt + Math.ceil(crashFlightMs({ game: 'crash', point: f.point }) / f.speed);
}

/**
 * A manual cash-out of bet `txId` asked at `now` (the deciding server's clock when the request
 * reached it): the flight's multiplier m(now), accepted only while it is below the crash point;
 * otherwise the bet has crashed (docs/architecture.md "a manual cash-out is decided by the server's clock at
 * receipt and appended").
 */
export function decideCashOut(
  f: Flight,
  txId: number,
  now: number,
): { readonly accepted: true; readonly event: BetCashedOut } | { readonly accepted: false } {
  if (now < f.startedAt) return { accepted: false };
  const cents = multiplierCentsAt((now - f.startedAt) * f.speed);
  if (now >= bustAt(f) || cents >= pointCents(f.point)) return { accepted: false };
  return {
    accepted: true,
    event: {
      type: 'BetCashedOut',
      round_id: f.roundId,
      game_slug: f.game,
      tx_id: txId,
      multiplier: centsToMultiplier(cents),
      at: now,
    },
  };
}

/** Where a game's current round stands, as folded from its `rounds` events. */
export type Phase =
  | { readonly phase: 'betting'; readonly opened: RoundOpened }
  | { readonly phase: 'running'; readonly opened: RoundOpened; readonly closedAt: number }
  | {
      readonly phase: 'finished';
      readonly roundId: number;
      readonly finishedAt: number;
      /** Id of the last round seen opening (RoundOpened), when one was. */
      readonly openedId?: number;
    };

/**
 * Folds one event of a game into its phase, in log order. Cash-outs are ignored.
 *
 * Opened rounds are the engine's, one at a time and with growing ids, so a RoundOpened opens when
 * its id is above the last round seen opening (a replayed or late one is ignored). A RoundFinished
 * ends the open round only when it is that round's; while a round is open, one of another id (a
 * record another producer appended) changes nothing, and after a finish it moves the phase only
 * forward. So a RoundFinished with an id ahead of the engine's never hides the engine's next
 * RoundOpened (docs/decisions/log-and-topics/0009-admission-of-a-rounds-record.md). The caller refuses
 * records the admission rule refuses (rules/rounds/admission.ts) before folding.
 */
export function evolvePhase(current: Phase | undefined, e: RoundEvent): Phase | undefined {
  if (e.type === 'BetCashedOut') return current;
  switch (e.type) {
    case 'RoundOpened': {
      const lastOpened =
        current === undefined
          ? -1
          : current.phase === 'finished'
            ? (current.openedId ?? current.roundId)
            : current.opened.round_id;
      if (e.round_id <= lastOpened) return current;
      // Without a RoundOpened seen, a finished round's id is the bar (a lower one is a late record).
      if (current?.phase === 'finished' && current.openedId === undefined && e.round_id <= current.roundId)
        return current;
      return { phase: 'betting', opened: e };
    }
    case 'BettingClosed':
      return current?.phase === 'betting' && current.opened.round_id === e.round_id
        ? { phase: 'running', opened: current.opened, closedAt: e.at }
        : current;
    case 'RoundFinished': {
      if (current === undefined) return { phase: 'finished', roundId: e.round_id, finishedAt: e.finished_at };
      if (current.phase !== 'finished')
        return current.opened.round_id === e.round_id
          ? { phase: 'finished', roundId: e.round_id, finishedAt: e.finished_at, openedId: e.round_id }
          : current;
      if (e.round_id <= current.roundId) return current;
      return {
        phase: 'finished',
        roundId: e.round_id,
        finishedAt: e.finished_at,
        ...(current.openedId === undefined ? {} : { openedId: current.openedId }),
      };
    }
  }
}

/**
 * When the next round of `game` opens, as far as can be told without revealing a result (Unix ms):
 * during the betting window, after it and the fixed draw; during a draw, at its end; during a crash
 * flight, null (its end would reveal the point); after a round, about now (the next one opens as
 * the last finishes, so `finishedAt`).
 */
export function nextOpeningAt(game: GameSlug, p: Phase | undefined): number | null {
  if (!p) return null;
  if (p.phase === 'finished') return p.finishedAt;
  const fixed = rulesOf(game).fixedResultMs;
  if (fixed === null) return null;
  const start = p.phase === 'running' ? p.closedAt : p.opened.betting_closes_at;
  return start + Math.ceil(fixed / p.opened.speed);
}
