/**
 * The round generator as a pure decider (docs/conventions.md §3, emmett's decide/evolve): the state of one
 * game is folded from its RoundFinished events, and the next round is decided from the state,
 * the hash chains and the time given. No I/O, no clock.
 */

import { FairnessInputError } from '../errors.ts';
import { buildChain, type HashChain, roundHmac } from '../fairness/chain.ts';
import { type GameSlug, gameBySlug } from '../games/catalog.ts';
import { rulesOf } from '../games/index.ts';
import type { RoundFinished } from './round.ts';

/** round_id = game_id * ROUND_ID_BASE + sequence (docs/decisions/log-and-topics/0004-round-ids.md). */
export const ROUND_ID_BASE = 1_000_000_000_000;

/** What the engine must know about one game to produce its next round. */
export interface GameState {
  readonly slug: GameSlug;
  /** Sequence of the last appended round; 0 before the first. */
  readonly sequence: number;
  /** Chain epoch and index of the last appended round (index 0: none yet in this epoch). */
  readonly epoch: number;
  readonly index: number;
  /** Commitment of the last round's chain; null before the first round with a proof. */
  readonly commitment: string | null;
}

/**
 * A decided round without its finish time (the engine keeps it to itself until RoundFinished),
 * and how long its result phase (BettingClosed → RoundFinished) lasts at speed 1, ms.
 */
export interface PendingRound {
  readonly round: Omit<RoundFinished, 'finished_at'>;
  readonly resultMs: number;
}

/** The hash chain of a game and epoch (memoised by the caller; building one costs N hashes). */
export type ChainSource = (slug: GameSlug, epoch: number) => HashChain;

/**
 * The chains of `serverSeed` with `length` rounds per epoch (ROUND_CHAIN_LENGTH), each built once:
 * keeps the newest two epochs asked for per game (the current one and the next), since a game's
 * rounds only move forward.
 */
export function cachedChains(serverSeed: Uint8Array, length: number): ChainSource {
  const cache = new Map<GameSlug, Map<number, HashChain>>();
  return (slug, epoch) => {
    const byEpoch = cache.get(slug) ?? new Map<number, HashChain>();
    cache.set(slug, byEpoch);
    let chain = byEpoch.get(epoch);
    if (!chain) {
      chain = buildChain(serverSeed, slug, epoch, length);
      byEpoch.set(epoch, chain);
      for (const e of byEpoch.keys()) if (e < epoch - 1) byEpoch.delete(e);
    }
    return chain;
  };
}

/** State of a game with no rounds. */
export function initialState(slug: GameSlug): GameState {
  return { slug, sequence: 0, epoch: 0, index: 0, commitment: null };
}

/** Sequence number inside a round id. @throws FairnessInputError when the id does not belong to `slug`. */
export function sequenceOf(slug: GameSlug, roundId: number): number {
  const gameId = (gameBySlug(slug) as { id: number }).id;
  const seq = roundId - gameId * ROUND_ID_BASE;
  if (!Number.isSafeInteger(seq) || seq < 1 || seq >= ROUND_ID_BASE)
    throw new FairnessInputError(`round id ${roundId} does not belong to ${slug}`);
  return seq;
}

/**
 * Folds one appended round into the state. A round without a proof advances only the sequence.
 * @throws FairnessInputError for a round of another game.
 */
export function evolve(state: GameState, event: RoundFinished): GameState {
  if (event.game_slug !== state.slug)
    throw new FairnessInputError(`round of ${event.game_slug} folded into ${state.slug}`);
  const sequence = Math.max(state.sequence, sequenceOf(state.slug, event.round_id));
  const p = event.proof;
  if (!p) return { ...state, sequence };
  return { slug: state.slug, sequence, epoch: p.chain_epoch, index: p.chain_index, commitment: p.commitment };
}

/**
 * Chain position of the next round: the next index of the current epoch, or index 1 of the next
 * epoch when the chain is used up or the current chain no longer has the recorded commitment
 * (server seed or ROUND_CHAIN_LENGTH changed), so a commitment is never contradicted.
 */
export function nextPosition(state: GameState, chains: ChainSource): { epoch: number; index: number } {
  if (state.commitment === null) return { epoch: state.epoch, index: state.index + 1 };
  const chain = chains(state.slug, state.epoch);
  if (state.index >= chain.length || chain.commitment !== state.commitment)
    return { epoch: state.epoch + 1, index: 1 };
  return { epoch: state.epoch, index: state.index + 1 };
}

/**
 * Decides the next round of a game: next sequence, next chain position, result from the revealed
 * hash, and the length of its result phase at speed 1.
 * @throws FairnessInputError when the sequence would leave the game's id range.
 */
export function nextRound(state: GameState, chains: ChainSource): PendingRound {
  const info = gameBySlug(state.slug) as NonNullable<ReturnType<typeof gameBySlug>>;
  const sequence = state.sequence + 1;
  if (sequence >= ROUND_ID_BASE) throw new FairnessInputError(`${state.slug} ran out of round ids`);
  const { epoch, index } = nextPosition(state, chains);
  const chain = chains(state.slug, epoch);
  const hash = chain.hashAt(index);
  const rules = rulesOf(state.slug);
  const result = rules.compute(roundHmac(hash, state.slug, chain.commitment));
  return {
    round: {
      type: 'RoundFinished',
      round_id: info.id * ROUND_ID_BASE + sequence,
      game_id: info.id,
      game_slug: info.slug,
      game_type: info.type,
      result,
      proof: {
        hash: hash.toString('hex'),
        chain_epoch: epoch,
        chain_index: index,
        commitment: chain.commitment,
      },
    },
    resultMs: rules.resultMs(result),
  };
}

/** The pending round, finished at `now` (Unix ms). */
export function finish(pending: PendingRound, now: number): RoundFinished {
  return { ...pending.round, finished_at: now };
}

/** decide(state, now): the next round of the game, finished at `now` (Unix ms). */
export function decide(state: GameState, chains: ChainSource, now: number): RoundFinished {
  return finish(nextRound(state, chains), now);
}
