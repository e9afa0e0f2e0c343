/**
 * The route schemas of the publisher API (POST /api/rounds/open, POST /api/rounds), built from the
 * game catalog. They are what the server enforces (fastify's ajv, strict: services/api/input-policy.ts) and what /openapi.json
 * shows, so the two cannot differ: one branch per game (`game_slug` selects it) with the
 * round_id range of that game (game_id × 10^12 + sequence) and the exact result shape of
 * input.ts (crash point and slot multiplier decimal strings ≥ 1.00 with two decimals; double
 * number 0..14 with its colour; wall-street up/down). input.ts then turns the body into a
 * RoundFinished; its checks are the same rules, kept for callers outside HTTP.
 */
import { GAMES, type GameInfo } from '../../../rules/games/catalog.ts';
import { BETTING_MS_MAX, BETTING_MS_MIN } from '../../../rules/rounds/publishing.ts';
import { closedObject, TEXT_PATTERN } from '../input-policy.ts';

const ROUND_SPAN = 1e12;
/** Decimal string ≥ 1.00 with exactly two decimals (input.ts DECIMAL2). */
const DECIMAL2 = '^[1-9][0-9]{0,8}\\.[0-9]{2}$';
/**
 * ISO 8601 date-time with a zone and at most milliseconds (input.ts ISO), together with the
 * `date-time` format, which rules out impossible days (and the pattern rules out leap seconds).
 */
const ISO =
  '^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-5][0-9]:[0-5][0-9](\\.[0-9]{1,3})?(Z|[+-][0-9]{2}:[0-9]{2})$';

const decimal = (description: string) => ({ type: 'string', pattern: DECIMAL2, description }) as const;
/** Decimal string ≥ 0.00 with exactly two decimals (input.ts PAYOUT2): a slot spin may pay nothing. */
const PAYOUT2 = '^(0|[1-9][0-9]{0,8})\\.[0-9]{2}$';

/** The result object of each game. */
function resultSchema(game: GameInfo): Record<string, unknown> {
  switch (game.slug) {
    case 'crash':
      return closedObject({ point: decimal('Crash point, e.g. "2.35".') }, ['point']);
    case 'double': {
      const band = (numbers: number[], color: string) =>
        closedObject(
          { color: { type: 'string', enum: [color] }, number: { type: 'integer', enum: numbers } },
          ['color', 'number'],
        );
      const range = (a: number, b: number) => Array.from({ length: b - a + 1 }, (_, i) => a + i);
      return {
        description: 'number 0 is white, 1..7 red, 8..14 black.',
        oneOf: [band([0], 'white'), band(range(1, 7), 'red'), band(range(8, 14), 'black')],
      };
    }
    case 'slot':
      return closedObject(
        {
          reels: {
            type: 'array',
            minItems: 1,
            maxItems: 10,
            items: { type: 'string', minLength: 1, maxLength: 32, pattern: TEXT_PATTERN },
          },
          multiplier: {
            type: 'string',
            pattern: PAYOUT2,
            description: 'Payout multiplier, e.g. "1.50"; "0.00" for a spin that pays nothing.',
          },
        },
        ['reels', 'multiplier'],
      );
    default:
      return closedObject({ trending: { type: 'string', enum: ['up', 'down'] } }, ['trending']);
  }
}

/** The round ids of `game`: game_id × 10^12 + sequence (sequence ≥ 1). */
function roundIdOf(game: GameInfo, description: string) {
  return {
    type: 'integer',
    minimum: game.id * ROUND_SPAN + 1,
    maximum: (game.id + 1) * ROUND_SPAN - 1,
    description,
  } as const;
}

/** The body of one game's rounds. */
function roundOf(game: GameInfo) {
  return closedObject(
    {
      game_slug: { type: 'string', enum: [game.slug] },
      round_id: roundIdOf(game, `game_id (${game.id}) × 10^12 + sequence.`),
      finished_at: { type: 'string', format: 'date-time', pattern: ISO, maxLength: 29 },
      result: resultSchema(game),
      seed: {
        type: 'string',
        pattern: '^[0-9a-fA-F]{64}$',
        description:
          "The round's seed, revealed: its SHA-256 is the commitment given when the round was opened, and the result follows from it by the game's rules (docs/threat-model.md).",
      },
    },
    ['game_slug', 'round_id', 'finished_at', 'result', 'seed'],
  );
}

/** The body opening one game's next round. */
function openOf(game: GameInfo) {
  return closedObject(
    {
      game_slug: { type: 'string', enum: [game.slug] },
      round_id: roundIdOf(
        game,
        `The game's next round: game_id (${game.id}) × 10^12 + sequence, one more than its last round.`,
      ),
      betting_ms: {
        type: 'integer',
        minimum: BETTING_MS_MIN,
        maximum: BETTING_MS_MAX,
        description: 'Length of the betting window, ms; the platform closes it by its own clock.',
      },
      commitment: {
        type: 'string',
        pattern: '^[0-9a-f]{64}$',
        description:
          "SHA-256 of the round's secret seed, 64 lower-case hex; the seed is revealed with the result.",
      },
    },
    ['game_slug', 'round_id', 'betting_ms', 'commitment'],
  );
}

/** Body schema of POST /api/rounds/open: one branch per game of the catalog. */
export const openRoundBody = {
  type: 'object',
  description: 'Opens the next round of an external game; `game_slug` selects the round_id range.',
  oneOf: GAMES.map(openOf),
} as const;

/** Body schema of POST /api/rounds: one branch per game of the catalog. */
export const postRoundBody = {
  type: 'object',
  description: 'A finished round of one game; `game_slug` selects the shape of `round_id` and `result`.',
  oneOf: GAMES.map(roundOf),
} as const;
