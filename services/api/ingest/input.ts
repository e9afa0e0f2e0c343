/**
 * Validation of rounds posted by external game servers into the parts of a finish request
 * (rules/rounds/publishing.ts). Rules per game follow docs/threat-model.md and the schema docs of
 * schemas/RoundFinished.v1.avsc: crash point and slot multiplier are decimal strings with two
 * decimals ≥ 1.00; double number 0..14 with 0 white, 1..7 red, 8..14 black; wall-street up/down.
 * round_id = game_id × 10^12 + sequence (docs/decisions/log-and-topics/0004-round-ids.md), so ids stay unique across games.
 * Pure: the body comes in as parsed JSON.
 */
import { gameBySlug } from '../../../rules/games/catalog.ts';
import type { RoundFinished, RoundResult } from '../../../rules/rounds/round.ts';

const DECIMAL2 = /^(?:[1-9][0-9]{0,8})\.[0-9]{2}$/;
/** A slot spin may pay nothing: "0.00" and up. */
const PAYOUT2 = /^(?:0|[1-9][0-9]{0,8})\.[0-9]{2}$/;
const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d{1,3})?(?:Z|[+-]\d{2}:\d{2})$/;
const ROUND_SPAN = 1e12;

type Check<T> = { ok: true; value: T } | { ok: false; error: string };
const bad = (error: string): { ok: false; error: string } => ({ ok: false, error });

function resultOf(game: string, r: unknown): Check<RoundResult> {
  if (typeof r !== 'object' || r === null || Array.isArray(r)) return bad('result must be an object');
  const o = r as Record<string, unknown>;
  switch (game) {
    case 'crash':
      if (typeof o.point !== 'string' || !DECIMAL2.test(o.point))
        return bad('result.point must be a decimal string like "2.35", >= 1.00');
      return { ok: true, value: { game, point: o.point } };
    case 'double': {
      const n = o.number;
      if (typeof n !== 'number' || !Number.isInteger(n) || n < 0 || n > 14)
        return bad('result.number must be an integer 0..14');
      const color = n === 0 ? 'white' : n <= 7 ? 'red' : 'black';
      if (o.color !== color) return bad(`result.color must be "${color}" for number ${n}`);
      return { ok: true, value: { game, color, number: n } };
    }
    case 'slot': {
      const reels = o.reels;
      if (
        !Array.isArray(reels) ||
        reels.length < 1 ||
        reels.length > 10 ||
        !reels.every((s) => typeof s === 'string' && s.length >= 1 && s.length <= 32)
      ) {
        return bad('result.reels must be 1..10 strings of 1..32 characters');
      }
      if (typeof o.multiplier !== 'string' || !PAYOUT2.test(o.multiplier))
        return bad('result.multiplier must be a decimal string like "1.50", >= 0.00');
      return { ok: true, value: { game, reels: reels as string[], multiplier: o.multiplier } };
    }
    case 'wall-street':
      if (o.trending !== 'up' && o.trending !== 'down') return bad('result.trending must be "up" or "down"');
      return { ok: true, value: { game, trending: o.trending } };
    default:
      return bad(`unknown game ${game}`);
  }
}

/** A posted finish request: the round as posted (proof null until the seed is checked) and its seed. */
export interface RoundPost {
  readonly round: RoundFinished;
  /** 64 hex. */
  readonly seed: string;
}

const SEED = /^[0-9a-fA-F]{64}$/;

/**
 * Turns a posted body into a round and its revealed seed.
 * @returns the request, or an error text naming the field and rule.
 */
export function parseRoundPost(body: unknown): Check<RoundPost> {
  if (typeof body !== 'object' || body === null || Array.isArray(body))
    return bad('body must be a JSON object');
  const b = body as Record<string, unknown>;
  const game = typeof b.game_slug === 'string' ? gameBySlug(b.game_slug) : undefined;
  if (!game) return bad('game_slug must be one of crash, double, slot, wall-street');
  const id = b.round_id;
  if (
    typeof id !== 'number' ||
    !Number.isSafeInteger(id) ||
    id <= game.id * ROUND_SPAN ||
    id >= (game.id + 1) * ROUND_SPAN
  ) {
    return bad(
      `round_id must be an integer between ${game.id * ROUND_SPAN + 1} and ${(game.id + 1) * ROUND_SPAN - 1} (game_id × 10^12 + sequence)`,
    );
  }
  const at =
    typeof b.finished_at === 'string' && ISO.test(b.finished_at) ? Date.parse(b.finished_at) : Number.NaN;
  if (!Number.isFinite(at)) return bad('finished_at must be an ISO 8601 date-time with a time zone');
  const result = resultOf(game.slug, b.result);
  if (!result.ok) return result;
  if (typeof b.seed !== 'string' || !SEED.test(b.seed))
    return bad("seed must be 64 hex characters, the seed whose SHA-256 was the round's commitment");
  const round: RoundFinished = {
    type: 'RoundFinished',
    round_id: id,
    game_id: game.id,
    game_slug: game.slug,
    game_type: game.type,
    finished_at: at,
    result: result.value,
    proof: null,
  };
  return { ok: true, value: { round, seed: b.seed.toLowerCase() } };
}
