/**
 * The RoundFinished event (schemas/RoundFinished.v1.avsc) as a TypeScript value and the two
 * public shapes of a round from docs/contract.md: the REST form and the stream message form. Its Avro
 * mapping is lib/log/rounds-codec.ts.
 */

import type * as Avro from '../../schemas/generated/avro.ts';
import type { GameSlug, GameType } from '../games/catalog.ts';

/** Typed result per game (docs/contract.md "Games"). */
export type RoundResult =
  | { readonly game: 'crash'; readonly point: string }
  | { readonly game: 'double'; readonly color: 'white' | 'red' | 'black'; readonly number: number }
  | { readonly game: 'slot'; readonly reels: readonly string[]; readonly multiplier: string }
  | { readonly game: 'wall-street'; readonly trending: 'up' | 'down' };

/** Provably-fair proof of a generated round (see rules/fairness/chain.ts). */
export type FairnessProof = Avro.FairnessProof;

export interface RoundFinished {
  readonly type: 'RoundFinished';
  readonly round_id: number;
  readonly game_id: number;
  readonly game_slug: GameSlug;
  readonly game_type: GameType;
  /** Unix ms. */
  readonly finished_at: number;
  readonly result: RoundResult;
  readonly proof: FairnessProof | null;
}

/**
 * A round's betting window opened (schemas/RoundOpened.v1.avsc). Nothing in it depends on the
 * result: the engine decides the result and keeps it to itself until RoundFinished.
 */
export interface RoundOpened {
  readonly type: 'RoundOpened';
  readonly round_id: number;
  readonly game_id: number;
  readonly game_slug: GameSlug;
  readonly game_type: GameType;
  /** Unix ms. */
  readonly betting_opens_at: number;
  /** Unix ms. */
  readonly betting_closes_at: number;
  readonly chain_epoch: number;
  readonly chain_index: number;
  /** Terminal hash of the round's chain, 64 hex. */
  readonly commitment: string;
  /** ROUND_SPEED: durations are divided by it; a crash flight's multiplier is e^(0.00006 · speed · ms). */
  readonly speed: number;
}

/** A round's betting window closed (schemas/BettingClosed.v1.avsc); a crash flight starts at `at`. */
export interface BettingClosed {
  readonly type: 'BettingClosed';
  readonly round_id: number;
  readonly game_id: number;
  readonly game_slug: GameSlug;
  /** Unix ms. */
  readonly at: number;
}

/** A crash bet cashed out by hand, decided by the engine below the point (schemas/BetCashedOut.v1.avsc). */
export interface BetCashedOut {
  readonly type: 'BetCashedOut';
  readonly round_id: number;
  readonly game_slug: GameSlug;
  readonly tx_id: number;
  /** Decimal string, two decimals, below the round's crash point. */
  readonly multiplier: string;
  /** Unix ms of the decision (engine clock). */
  readonly at: number;
}

/** The lifecycle of a round as subscribers may see it (opt-in on streams). */
export type RoundLifecycle = RoundOpened | BettingClosed;

/** Every event of the `rounds` topic. */
export type RoundEvent = RoundOpened | BettingClosed | RoundFinished | BetCashedOut;

/** The per-game data of a result, without the `game` discriminator (the seed's `extras`). */
export function extrasOf(result: RoundResult): Record<string, unknown> {
  const { game: _game, ...extras } = result;
  return extras;
}

/** The seed's `value`: crash point, double colour, slot multiplier, wall-street trend. */
export function roundValue(result: RoundResult): string {
  switch (result.game) {
    case 'crash':
      return result.point;
    case 'double':
      return result.color;
    case 'slot':
      return result.multiplier;
    case 'wall-street':
      return result.trending;
  }
}

/** REST form of docs/contract.md ("Round (REST form)"); `finished_at` as ISO 8601 in UTC. */
export interface RestRound {
  game_slug: string;
  game_type: string;
  finished_at: string;
  value: string;
}

/** Stream message form of docs/contract.md, identical for every streaming protocol. */
export interface StreamRound {
  round_id: number;
  game_id: number;
  game_slug: string;
  game_type: string;
  finished_at: string;
  /** JSON text of the per-game data. */
  extras: string;
  /** Unix ms when the round was appended to the log, for latency measurement. */
  timestamp: number;
}

/** REST form; `asType` overrides `game_type` for history by type (seed: slot reads multiplier there). */
export function toRestForm(round: RoundFinished, asType?: GameType): RestRound {
  return {
    game_slug: round.game_slug,
    game_type: asType ?? round.game_type,
    finished_at: new Date(round.finished_at).toISOString(),
    value: roundValue(round.result),
  };
}

/** Stream form; `appendedAt` is the log append time in Unix ms. */
export function toStreamForm(round: RoundFinished, appendedAt: number, asType?: GameType): StreamRound {
  return {
    round_id: round.round_id,
    game_id: round.game_id,
    game_slug: round.game_slug,
    game_type: asType ?? round.game_type,
    finished_at: new Date(round.finished_at).toISOString(),
    extras: JSON.stringify(extrasOf(round.result)),
    timestamp: appendedAt,
  };
}
