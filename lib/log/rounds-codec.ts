/**
 * The Avro mapping of the events of the `rounds` topic (Confluent framing through codec.ts):
 * RoundFinished under the topic subject `rounds-value` (schemas/RoundFinished.v1.avsc, as since the
 * first version, so every existing reader keeps working), and the lifecycle events RoundOpened,
 * BettingClosed and the cash-out decisions BetCashedOut under their record names. The events
 * themselves are rules/rounds/round.ts.
 *
 * `decodeRound` reads a RoundFinished only (and refuses the others by subject); consumers of the
 * whole topic use `decodeRoundEvent`.
 */
import { type GameType, gameBySlug } from '../../rules/games/catalog.ts';
import type {
  BetCashedOut,
  BettingClosed,
  RoundEvent,
  RoundFinished,
  RoundOpened,
  RoundResult,
} from '../../rules/rounds/round.ts';
import type * as Avro from '../../schemas/generated/avro.ts';
import { DecodeError } from '../errors.ts';
import { decode, encode } from './codec.ts';

export const ROUNDS_SUBJECT = 'rounds-value';
const OPENED_SUBJECT = 'casino.rounds.RoundOpened';
const CLOSED_SUBJECT = 'casino.rounds.BettingClosed';
const CASHED_OUT_SUBJECT = 'casino.rounds.BetCashedOut';

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
  return finishedOf(decode(buf, ROUNDS_SUBJECT).value);
}

function finishedOf(value: unknown): RoundFinished {
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

/** The catalog entry of a decoded event's game. @throws DecodeError for an unknown game or id. */
function gameOf(slug: string, id?: number) {
  const info = gameBySlug(slug);
  if (!info || (id !== undefined && info.id !== id)) throw new DecodeError(`unknown game ${slug} (id ${id})`);
  return info;
}

/**
 * Encodes any event of the `rounds` topic.
 * @throws EncodeError when a field does not fit its schema.
 */
export function encodeRoundEvent(event: RoundEvent): Buffer {
  switch (event.type) {
    case 'RoundFinished':
      return encodeRound(event);
    case 'RoundOpened': {
      const { type: _t, ...value } = event;
      return encode(OPENED_SUBJECT, value);
    }
    case 'BettingClosed': {
      const { type: _t, ...value } = event;
      return encode(CLOSED_SUBJECT, value);
    }
    case 'BetCashedOut': {
      const { type: _t, ...value } = event;
      return encode(CASHED_OUT_SUBJECT, value);
    }
  }
}

/**
 * Decodes any event of the `rounds` topic.
 * @throws DecodeError for bad framing, a subject that is not a rounds event, an unknown game, or a
 *   result that does not match its game.
 */
export function decodeRoundEvent(buf: Buffer | null | undefined): RoundEvent {
  const { subject, value } = decode(buf);
  switch (subject) {
    case ROUNDS_SUBJECT:
      return finishedOf(value);
    case OPENED_SUBJECT: {
      const v = value as Omit<RoundOpened, 'type'>;
      const info = gameOf(v.game_slug, v.game_id);
      return { ...v, type: 'RoundOpened', game_slug: info.slug, game_type: info.type };
    }
    case CLOSED_SUBJECT: {
      const v = value as Omit<BettingClosed, 'type'>;
      return { ...v, type: 'BettingClosed', game_slug: gameOf(v.game_slug, v.game_id).slug };
    }
    case CASHED_OUT_SUBJECT: {
      const v = value as Omit<BetCashedOut, 'type'>;
      return { ...v, type: 'BetCashedOut', game_slug: gameOf(v.game_slug).slug };
    }
    default:
      throw new DecodeError(`schema subject ${subject} is not an event of the rounds topic`);
  }
}
