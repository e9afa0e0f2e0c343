/**
 * The RoundFinished event (schemas/RoundFinished.v1.avsc) as a TypeScript value, its Avro
 * mapping, and the two public shapes of a round from seed 000: the REST form and the stream
 * message form.
 */

import { DecodeError } from '../../lib/errors.ts';
import { decode, encode } from '../../lib/log/codec.ts';
import type * as Avro from '../../schemas/generated/avro.ts';
import { type GameSlug, type GameType, gameBySlug } from '../games/catalog.ts';

export const ROUNDS_SUBJECT = 'rounds-value';

/** Typed result per game (seed 000, "Content of extras after parsing"). */
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

const GAME_OF_UNION = new Map<string, RoundResult['game']>([
  ['casino.rounds.CrashResult', 'crash'],
  ['casino.rounds.DoubleResult', 'double'],
  ['casino.rounds.SlotResult', 'slot'],
  ['casino.rounds.WallStreetResult', 'wall-street'],
]);

/** The per-game data of a result, without the `game` discriminator (the seed's `extras`). */
export function extrasOf(result: RoundResult): Record<string, unknown> {
  const { game: _game, ...extras } = result;
  return extras;
}

/**
 * Encodes a round as a framed Avro record for the `rounds` topic.
 * @throws EncodeError when a field does not fit the schema.
 */
export function encodeRound(round: RoundFinished): Buffer {
  const { type: _type, result, ...rest } = round;
  const value: Avro.RoundFinished = { ...rest, result: toAvroResult(result) };
  return encode(ROUNDS_SUBJECT, value);
}

function toAvroResult(r: RoundResult): Avro.RoundFinished['result'] {
  switch (r.game) {
    case 'crash':
      return { 'casino.rounds.CrashResult': { point: r.point } };
    case 'double':
      return { 'casino.rounds.DoubleResult': { color: r.color, number: r.number } };
    case 'slot':
      return { 'casino.rounds.SlotResult': { reels: r.reels, multiplier: r.multiplier } };
    case 'wall-street':
      return { 'casino.rounds.WallStreetResult': { trending: r.trending } };
  }
}

/**
 * Decodes a framed record of the `rounds` topic.
 * @throws DecodeError for bad framing, another subject, or a result that does not match its game.
 */
export function decodeRound(buf: Buffer | null | undefined): RoundFinished {
  const { value } = decode(buf, ROUNDS_SUBJECT);
  const v = value as Omit<RoundFinished, 'type' | 'result'> & {
    result: Record<string, Record<string, unknown>>;
  };
  const [unionName, extras] = Object.entries(v.result)[0] ?? [];
  const game = unionName ? GAME_OF_UNION.get(unionName) : undefined;
  if (!game || game !== v.game_slug)
    throw new DecodeError(`result ${unionName} does not belong to game ${v.game_slug}`);
  const info = gameBySlug(v.game_slug);
  if (!info || info.id !== v.game_id) throw new DecodeError(`unknown game ${v.game_slug} (id ${v.game_id})`);
  return {
    type: 'RoundFinished',
    round_id: v.round_id,
    game_id: v.game_id,
    game_slug: info.slug,
    game_type: v.game_type as GameType,
    finished_at: v.finished_at,
    result: { game, ...extras } as RoundResult,
    proof: v.proof ?? null,
  };
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

/** REST form of seed 000 ("Round (REST form)"); `finished_at` as ISO 8601 in UTC. */
export interface RestRound {
  game_slug: string;
  game_type: string;
  finished_at: string;
  value: string;
}

/** Stream message form of seed 000, identical for every streaming protocol. */
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
