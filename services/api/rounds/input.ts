/**
 * Strict parsing of the rounds endpoints' path and query input. Pure; throws the API errors
 * whose texts clients see. The route schemas describe the same rules for OpenAPI, but these
 * functions run first (preValidation) so every bad input gets the seed's or docs/architecture.md's text
 * rather than a generic schema message, and so `limit` is checked on the raw query string
 * (schema coercion would accept `1e2`, ` 5` or `+5`).
 */
import {
  type GameInfo,
  type GameType,
  gameBySlug,
  isGameType,
  isWellFormedSlug,
} from '../../../rules/games/catalog.ts';
import { InvalidInputError, NotFoundError } from '../errors.ts';

/** History `limit` bounds and default (docs/contract.md "Limits"). */
export const LIMIT_MIN = 1;
export const LIMIT_MAX = 1000;
export const LIMIT_DEFAULT = 500;
export const LIMIT_RULE = `limit must be an integer from ${LIMIT_MIN} to ${LIMIT_MAX}`;

/** At most four digits: rejects signs, exponents, decimals, blanks and hex before range checks. */
const DIGITS = /^[0-9]{1,4}$/;

/**
 * The game named by a `:game` path parameter.
 * @throws InvalidInputError "Invalid game slug" unless the value matches `[a-z0-9-]{1,64}` (docs/contract.md, 400).
 * @throws NotFoundError "Game not found" for a well-formed slug of no game (docs/contract.md, 404).
 */
export function parseGameParam(raw: unknown): GameInfo {
  if (typeof raw !== 'string' || !isWellFormedSlug(raw)) {
    throw new InvalidInputError('INVALID_GAME_SLUG', 'Invalid game slug');
  }
  const game = gameBySlug(raw);
  if (!game) throw new NotFoundError('GAME_NOT_FOUND', 'Game not found');
  return game;
}

/**
 * The game type named by a `:type` path parameter.
 * @throws InvalidInputError "Invalid game type" unless the value matches `[a-z0-9-]{1,64}`.
 * @throws NotFoundError "Game type not found" for a well-formed name that is not one of the four types.
 */
export function parseTypeParam(raw: unknown): GameType {
  if (typeof raw !== 'string' || !isWellFormedSlug(raw)) {
    throw new InvalidInputError('INVALID_GAME_TYPE', 'Invalid game type');
  }
  if (!isGameType(raw)) throw new NotFoundError('GAME_TYPE_NOT_FOUND', 'Game type not found');
  return raw;
}

/**
 * The history `limit` from a parsed query string value: absent → 500; otherwise exactly one
 * decimal integer from 1 to 1000.
 * @param raw what the query parser produced: undefined, a string, or an array for a repeated key.
 * @throws InvalidInputError naming the rule for an empty, repeated, signed, fractional, non-numeric
 *   or out-of-range value.
 */
export function parseLimit(raw: unknown): number {
  if (raw === undefined) return LIMIT_DEFAULT;
  if (Array.isArray(raw)) {
    throw new InvalidInputError('INVALID_LIMIT', `${LIMIT_RULE}, given once`);
  }
  if (typeof raw !== 'string' || !DIGITS.test(raw)) {
    throw new InvalidInputError('INVALID_LIMIT', LIMIT_RULE);
  }
  const n = Number(raw);
  if (n < LIMIT_MIN || n > LIMIT_MAX) throw new InvalidInputError('INVALID_LIMIT', LIMIT_RULE);
  return n;
}
