/**
 * The Avro mapping of `RoundFinished` on the `rounds` topic (schemas/RoundFinished.v1.avsc,
 * Confluent framing through codec.ts). The event itself is rules/rounds/round.ts.
 */
import { type GameType, gameBySlug } from '../../rules/games/catalog.ts';
import type { RoundFinished, RoundResult } from '../../rules/rounds/round.ts';
import type * as Avro from '../../schemas/generated/avro.ts';
import { DecodeError } from '../errors.ts';
import { decode, encode } from './codec.ts';

export const ROUNDS_SUBJECT = 'rounds-value';

const GAME_OF_UNION = new Map<string, RoundResult['game']>([
  ['casino.rounds.CrashResult', 'crash'],
  ['casino.rounds.DoubleResult', 'double'],
  ['casino.rounds.SlotResult', 'slot'],
  ['casino.rounds.WallStreetResult', 'wall-street'],
]);

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
