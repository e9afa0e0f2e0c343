/**
 * GET /api/rounds/current/:game: the round of a game that is taking bets or
 * running now, from the lifecycle read from the log (lib/log/round-phases.ts), with the same 400 and
 * 404 rules, CORS and per-IP rate limit as the other game routes (it is registered in their scope):
 * `{game_slug, round_id, phase: "betting" | "running" | "between", betting_opens_at,
 * betting_closes_at}`, ISO 8601 times. Between a round's end and the next one's opening (a few ms,
 * or while the engine is stopped) the phase is `between`, with the last round's id (null before
 * the engine's first round) and no window: an ordinary state, not an error.
 */
import type { FastifyPluginAsync } from 'fastify';
import type { RoundPhases } from '../../../lib/log/round-phases.ts';
import type { GameSlug } from '../../../rules/games/catalog.ts';
import { parseGameParam } from './input.ts';
import { commonErrors, errorRef, gameParams } from './schemas.ts';

const currentRound = {
  type: 'object',
  description: 'The round taking bets or running now.',
  required: ['game_slug', 'round_id', 'phase', 'betting_opens_at', 'betting_closes_at'],
  additionalProperties: false,
  properties: {
    game_slug: { type: 'string' },
    round_id: { type: 'integer', nullable: true, description: 'null before the first round.' },
    phase: {
      type: 'string',
      enum: ['betting', 'running', 'between'],
      description: 'between: no round is open; the fields describe the last one.',
    },
    betting_opens_at: { type: 'string', format: 'date-time', nullable: true },
    betting_closes_at: { type: 'string', format: 'date-time', nullable: true },
  },
} as const;

export const currentRoundSchema = {
  summary: 'The round of a game taking bets or running now, from the log',
  tags: ['rounds'],
  params: gameParams,
  response: {
    200: currentRound,
    400: { ...errorRef, description: 'Invalid game slug.' },
    404: { ...errorRef, description: 'Game not found.' },
    ...commonErrors,
  },
} as const;

/** The route, reading `phases`. */
export function currentRoundRoutes(phases: RoundPhases): FastifyPluginAsync {
  return async (app) => {
    app.get<{ Params: { game: string } }>(
      '/api/rounds/current/:game',
      // Input is checked by parseGameParam for the seed's texts; the schema documents it.
      { schema: currentRoundSchema, validatorCompiler: () => () => true },
      async (req) => {
        const game = parseGameParam(req.params.game);
        const p = phases.phase(game.slug as GameSlug);
        if (!p || p.phase === 'finished')
          return {
            game_slug: game.slug,
            round_id: p ? p.roundId : null,
            phase: 'between',
            betting_opens_at: null,
            betting_closes_at: null,
          };
        return {
          game_slug: game.slug,
          round_id: p.opened.round_id,
          phase: p.phase,
          betting_opens_at: new Date(p.opened.betting_opens_at).toISOString(),
          betting_closes_at: new Date(p.opened.betting_closes_at).toISOString(),
        };
      },
    );
  };
}
