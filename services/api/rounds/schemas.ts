/**
 * JSON schemas of the rounds endpoints. They drive response serialisation (fast-json-stringify
 * writes only the declared fields) and the generated OpenAPI document (/openapi.json); the
 * strict input rules themselves are in input.ts.
 */
import { GAME_SLUGS, GAME_TYPES } from '../../../rules/games/catalog.ts';
import { LIMIT_DEFAULT, LIMIT_MAX, LIMIT_MIN } from './input.ts';

export const errorRef = { $ref: 'ErrorBody#' } as const;

/** Error responses every rounds endpoint can give besides its own 400/404. */
export const commonErrors = {
  429: { ...errorRef, description: 'Per-IP rate limit exceeded: "Too many requests, please slow down".' },
  500: { ...errorRef, description: 'Internal Server Error.' },
  503: { ...errorRef, description: 'Read-model database unreachable: "Service Unavailable".' },
} as const;

const restRoundProps = {
  game_slug: { type: 'string', description: 'URL-friendly game name.' },
  game_type: { type: 'string', enum: GAME_TYPES, description: 'Game type.' },
  finished_at: { type: 'string', format: 'date-time', description: 'When the round finished (UTC).' },
  value: {
    type: 'string',
    description: 'crash point / slot multiplier as a decimal string, double colour, or wall-street trend.',
  },
} as const;

const game = {
  type: 'object',
  required: ['slug', 'name', 'type', 'last_round', 'last_update'],
  properties: {
    slug: { type: 'string', enum: GAME_SLUGS },
    name: { type: 'string' },
    type: { type: 'string', enum: GAME_TYPES, description: 'Primary game type.' },
    last_round: { type: ['integer', 'null'], description: 'Id of the last round; null before the first.' },
    last_update: {
      type: ['string', 'null'],
      format: 'date-time',
      description: 'Time of the last update; null before the first round.',
    },
  },
} as const;

const historyRow = {
  type: 'object',
  required: ['round_id', 'game_slug', 'game_type', 'finished_at', 'value'],
  properties: { round_id: { type: 'integer' }, ...restRoundProps },
} as const;

const latestRound = {
  type: 'object',
  description: 'REST form fields plus the stream-message form fields (docs/architecture.md).',
  required: ['round_id', 'game_id', 'game_slug', 'game_type', 'finished_at', 'value', 'extras', 'timestamp'],
  properties: {
    ...restRoundProps,
    round_id: { type: 'integer' },
    game_id: { type: 'integer', description: 'Database id of the game.' },
    extras: { type: 'string', description: 'JSON text of the per-game data, to be parsed by the client.' },
    timestamp: { type: 'integer', description: 'Unix ms when the round was appended to the log.' },
  },
} as const;

export const gameParams = {
  type: 'object',
  required: ['game'],
  properties: {
    game: { type: 'string', enum: GAME_SLUGS, description: 'Game slug; `[a-z0-9-]{1,64}` else 400.' },
  },
} as const;

const limitQuery = {
  type: 'object',
  properties: {
    limit: {
      type: 'integer',
      minimum: LIMIT_MIN,
      maximum: LIMIT_MAX,
      default: LIMIT_DEFAULT,
      description: 'Number of rows, newest first; anything but one integer 1..1000 is 400.',
    },
  },
} as const;

export const gamesSchema = {
  summary: 'List the games',
  tags: ['rounds'],
  response: { 200: { type: 'array', description: 'The four games, by id.', items: game }, ...commonErrors },
} as const;

export const latestSchema = {
  summary: 'Latest finished round of a game',
  tags: ['rounds'],
  params: gameParams,
  response: {
    200: latestRound,
    400: { ...errorRef, description: 'Invalid game slug.' },
    404: { ...errorRef, description: 'Game not found, or no rounds yet.' },
    ...commonErrors,
  },
} as const;

export const historySchema = {
  summary: 'Round history of a game, newest first',
  tags: ['rounds'],
  params: gameParams,
  querystring: limitQuery,
  response: {
    200: { type: 'array', description: 'Rounds of the game, newest first.', items: historyRow },
    400: { ...errorRef, description: 'Invalid game slug, or a bad limit.' },
    404: { ...errorRef, description: 'Game not found.' },
    ...commonErrors,
  },
} as const;

export const historyByTypeSchema = {
  summary: 'Round history of every game of a type, newest first; game_type is the requested type',
  tags: ['rounds'],
  params: {
    type: 'object',
    required: ['type'],
    properties: { type: { type: 'string', enum: GAME_TYPES, description: 'Game type.' } },
  },
  querystring: limitQuery,
  response: {
    200: {
      type: 'array',
      description: 'Rounds of every game of the type, newest first; game_type reads the requested type.',
      items: historyRow,
    },
    400: { ...errorRef, description: 'Invalid game type, or a bad limit.' },
    404: { ...errorRef, description: 'Game type not found.' },
    ...commonErrors,
  },
} as const;
