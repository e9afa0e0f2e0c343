/**
 * Route schemas of the session API for /openapi.json. Inputs come from the zod rules of input.ts
 * (which validate in the handlers); every error is RFC 7807 problem JSON (shared schema `Problem`).
 */
import { z } from 'zod';
import {
  betBody,
  createOperatorBody,
  docSchema,
  freeBetBody,
  openBody,
  pageQuery,
  requestAccessBody,
  updateOperatorBody,
} from './input.ts';

/** A problem-JSON error response (shared schema `Problem`) with its description. */
export const problem = (description: string) => ({ $ref: 'Problem#', description }) as const;
/** The errors of every admin route: bad input, no key, a key without the admin scope. */
export const adminErr = {
  400: problem('Invalid body (the field and rule are in detail).'),
  401: problem('Missing, malformed, unknown or revoked API key.'),
  403: problem('The key lacks the admin scope.'),
} as const;
const opErr = { 401: problem('Missing or wrong operator bearer.') } as const;
const playErr = { 401: problem('Missing or wrong player bearer, or the session ended.') } as const;
type Security = Record<string, string[]>[];
/** Security of the admin routes: an admin API key (X-API-Key or bearer). */
export const admin: Security = [{ apiKey: [] }, { bearer: [] }];
const bearer: Security = [{ bearer: [] }];
/** A success body: the named fields are described, the rest pass through as they are. */
const ok = (description: string, properties: Record<string, { type: string; description?: string }>) =>
  ({
    description,
    type: 'object',
    additionalProperties: true,
    required: Object.keys(properties),
    properties,
  }) as const;
const idParams = docSchema(z.object({ id: z.string() }));

// Success bodies of the routes that had none, as the handlers write them.
const str = { type: 'string' } as const;
const int = { type: 'integer' } as const;
const nullableStr = { type: 'string', nullable: true } as const;
/** A response object schema whose every listed property is required. */
export const closed = (properties: Record<string, unknown>, description?: string) =>
  ({
    type: 'object',
    ...(description ? { description } : {}),
    required: Object.keys(properties),
    properties,
  }) as const;
/**
 * An operator's callback settings as responses show them (the admin view and the operator portal's):
 * no token, signing secret or retry policy.
 */
export const operatorSettingsProperties = {
  operator_id: str,
  name: str,
  callback_form: { type: 'string', enum: ['A', 'B'] },
  base_url: str,
  bet_path: str,
  win_path: str,
  balance_path: str,
  rollback_path: str,
  timeout_ms: int,
  answer_table: {
    description:
      "How the operator's answers count: a preset (seed, http-status, status-in-body) or a preset with codes.",
  },
  round_close: { type: 'string', enum: ['zero-win', 'round-end', 'none'] },
  round_end_path: nullableStr,
  amount_format: { type: 'string', enum: ['string', 'number'] },
} as const;
/** The last readiness probe of an operator; null before the first. */
export const readinessSchema = {
  description:
    'The last readiness probe: the balance callback for the readiness test player and every configured callback path; null before the first.',
  type: 'object',
  nullable: true,
  required: ['ready', 'checked_at', 'checks'],
  properties: {
    ready: { type: 'boolean' },
    checked_at: { type: 'string', format: 'date-time' },
    checks: {
      type: 'array',
      items: closed({ name: str, method: str, path: str, ok: { type: 'boolean' }, detail: str }),
    },
  },
} as const;
const operatorView = closed(
  {
    ...operatorSettingsProperties,
    retry_policy: {
      description:
        'The retry schedule of wins, rollbacks and round closes ({delaysMs, jitter}), or the exponential shape ({retries, minTimeoutMs, maxTimeoutMs, factor}; maxTimeoutMs below minTimeoutMs is 400).',
      type: 'object',
      additionalProperties: true,
    },
    readiness: readinessSchema,
    created_at: { type: 'string', format: 'date-time' },
    disabled_at: { type: 'string', format: 'date-time', nullable: true },
  },
  'An operator, without its token and signing secret.',
);
const gameRow = closed({ id: int, slug: str, name: str, type: str });
const transactionRow = closed({
  transactionId: int,
  roundId: str,
  transactionType: str,
  requestedAt: { type: 'string', format: 'date-time' },
  transactionStatus: str,
  amount: { type: 'number' },
  roundStatus: str,
});
const activeSession = closed({
  session_id: str,
  game: str,
  user_id: str,
  username: str,
  currency: str,
  demo: { type: 'boolean' },
  created_at: { type: 'string', format: 'date-time' },
  opened_at: { type: 'string', format: 'date-time' },
  expires_at: { type: 'string', format: 'date-time' },
});
const betTransaction = closed({
  tx_id: int,
  bet_tx_id: int,
  kind: str,
  status: str,
  round_status: str,
  round_id: str,
  amount: { type: 'number' },
  mode: str,
  requested_at: { type: 'string', format: 'date-time' },
  updated_at: { type: 'string', format: 'date-time' },
  new_balance: nullableStr,
  detail: nullableStr,
});

export const adminSchemas = {
  create: {
    tags: ['operators'],
    summary:
      'Register an operator (admin). api_token (bearer) and signing_secret (Standard Webhooks) are shown once.',
    security: admin,
    body: docSchema(createOperatorBody),
    response: {
      201: ok('The operator, with its secrets (shown only here).', {
        operator_id: { type: 'string' },
        api_token: { type: 'string', description: 'Bearer of request-access: op_ + 64 hex.' },
        signing_secret: { type: 'string', description: 'whsec_ + base64 of 32 bytes.' },
      }),
      ...adminErr,
    },
  },
  list: {
    tags: ['operators'],
    summary: 'List operators, without secrets (admin).',
    security: admin,
    response: { 200: closed({ operators: { type: 'array', items: operatorView } }), ...adminErr },
  },
  get: {
    tags: ['operators'],
    summary: 'One operator, without secrets (admin).',
    security: admin,
    params: idParams,
    response: { 200: operatorView, ...adminErr, 404: problem('No such operator.') },
  },
  disable: {
    tags: ['operators'],
    summary:
      'Delete (disable) an operator (admin): its token stops working and it is no longer listed or readable; its sessions and transactions stay.',
    security: admin,
    params: idParams,
    response: { 200: operatorView, ...adminErr, 404: problem('No such operator.') },
  },
  update: {
    tags: ['operators'],
    summary:
      "Change an operator's callback configuration (admin); its readiness probe runs again and the answer shows it.",
    security: admin,
    params: idParams,
    body: docSchema(updateOperatorBody),
    response: { 200: operatorView, ...adminErr, 404: problem('No such operator.') },
  },
  probe: {
    tags: ['operators'],
    summary:
      "Run an operator's readiness probe now (admin): the balance callback for the readiness test player and a request with no money fields on every configured path.",
    security: admin,
    params: idParams,
    response: { 200: operatorView, ...adminErr, 404: problem('No such operator.') },
  },
} as const;

export const sessionSchemas = {
  requestAccess: {
    tags: ['sessions'],
    summary:
      'Create a game session for a player (docs/contract.md "Operator callbacks"): a one-time game_url and the session_token.',
    security: bearer,
    body: docSchema(requestAccessBody),
    response: {
      200: closed({
        game_url: { type: 'string', description: 'The player page with a one-time launch code.' },
        session_token: { type: 'string', description: 'st_ + 64 hex; carried in every callback.' },
      }),
      400: problem('Invalid body.'),
      ...opErr,
      404: problem('Unknown game.'),
    },
  },
  games: {
    tags: ['sessions'],
    summary: 'The game list (operator bearer).',
    security: bearer,
    response: { 200: closed({ games: { type: 'array', items: gameRow } }), ...opErr },
  },
  transactions: {
    tags: ['sessions'],
    summary: "A session's wallet transactions, paged (operator bearer; other operators' sessions: 404).",
    security: bearer,
    params: docSchema(z.object({ sessionId: z.string() })),
    querystring: docSchema(pageQuery),
    response: {
      200: closed({
        transactions: { type: 'array', items: transactionRow },
        pagination: closed({ pageSize: int, pageNumber: int, totalPages: int, totalItems: int }),
      }),
      400: problem('Bad pageSize or pageNumber.'),
      ...opErr,
      404: problem('No such session.'),
    },
  },
  active: {
    tags: ['sessions'],
    summary: "The operator's opened sessions that have not ended or expired.",
    security: bearer,
    response: { 200: closed({ sessions: { type: 'array', items: activeSession } }), ...opErr },
  },
  freeBets: {
    tags: ['sessions'],
    summary: 'Grant free bets to a player (Redeem Free Bet); played with mode "free".',
    security: bearer,
    body: docSchema(freeBetBody),
    response: {
      201: ok('The grant.', { grant_id: { type: 'integer' }, quantity_left: { type: 'integer' } }),
      400: problem('Invalid body.'),
      ...opErr,
      404: problem('Unknown game.'),
    },
  },
} as const;

export const playSchemas = {
  open: {
    tags: ['play'],
    summary: 'Consume the launch code of a game URL (once) and get the player bearer.',
    body: docSchema(openBody),
    response: {
      200: {
        ...closed({
          player_token: { type: 'string', description: 'pt_…: the player bearer of /play/*.' },
          session: { type: 'object', additionalProperties: true, description: 'The opened session.' },
        }),
      },
      400: problem('Invalid body.'),
      404: problem('Unknown code.'),
      410: problem('Used or expired.'),
    },
  },
  balance: {
    tags: ['play'],
    summary: "The player's balance (operator Balance callback; demo: the virtual balance).",
    security: bearer,
    response: {
      200: closed({
        balance: { type: 'string', description: 'Decimal string in major units.' },
        currency: str,
        demo: { type: 'boolean' },
      }),
      ...playErr,
      502: problem('The operator did not answer usefully.'),
    },
  },
  bet: {
    tags: ['play'],
    summary:
      "Place a bet on the round of the session game whose betting window is open; answered 202 once BetPlaced is appended. 400 also for rules relative to the session: a `selection` of another game than the session's, an amount with more decimals than the session currency's exponent, a free bet in a demo session.",
    security: bearer,
    body: docSchema(betBody),
    response: {
      202: ok('BetPlaced is on the log; poll GET /play/bets/{tx_id}.', {
        tx_id: { type: 'integer', description: 'provider_tx_id of the bet (a multiple of 4).' },
        round_id: { type: 'integer' },
        count_register: { type: 'integer' },
      }),
      400: problem('Invalid amount or selection.'),
      ...playErr,
      402: problem('Demo: the virtual balance is too low.'),
      409: problem(
        'BETTING_CLOSED (no window open, or an earlier round named; `next_round_opens_at` tells when the next opens, null during a crash flight; also when the bet reached the log only after the round closed, as in a broker failover: then `tx_id` and `round_id` name the bet, which is cancelled and its stake returned, and GET /play/bets/{tx_id} shows it), ROUND_NOT_OPEN (a later round named), or NO_FREE_BET.',
      ),
      503: problem(
        "OPERATOR_UNAVAILABLE: the operator's wallet is failing and its circuit breaker is open; `Retry-After` gives the seconds until the next probe.",
      ),
    },
  },
  round: {
    tags: ['play'],
    summary:
      "The current round of the session's game: phase, betting window, the crash flight's start and speed (m(t) = e^(0.00006·speed·ms)), and the player's bets on it.",
    security: bearer,
    response: {
      200: ok('The current round.', {
        game: { type: 'string' },
        server_time: { type: 'integer', description: 'Unix ms, to correct the page clock.' },
        phase: { type: 'string', description: 'betting, running, or between (a round just ended).' },
      }),
      ...playErr,
    },
  },
  cashOut: {
    tags: ['play'],
    summary:
      "Cash out a crash bet during its round's flight: the round engine decides by its clock, below the crash point, and settlement pays that multiplier.",
    security: bearer,
    params: docSchema(z.object({ tx_id: z.string().regex(/^[1-9][0-9]{0,14}$/) })),
    response: {
      200: ok('Cashed out.', {
        tx_id: { type: 'integer' },
        round_id: { type: 'integer' },
        multiplier: {
          type: 'string',
          description:
            'The multiplier paid (two decimals): the lower of this cash-out and the auto cash-out.',
        },
        at: { type: 'string', description: 'When the engine decided (ISO 8601).' },
        payout: { type: 'number', description: 'Stake × multiplier, floored to the minor unit.' },
        requested_multiplier: {
          type: 'string',
          description: "The flight's multiplier by the API's clock at the request.",
        },
      }),
      400: problem('tx_id is not a positive integer.'),
      ...playErr,
      404: problem('No such bet of this session (a tx_id that is no bet id included).'),
      409: problem(
        'NOT_A_CRASH_BET, FLIGHT_NOT_STARTED, ROUND_FINISHED, ALREADY_CASHED_OUT (or the auto cash-out came first), or CRASHED.',
      ),
      503: problem('The round engine cannot be reached; nothing was decided.'),
    },
  },
  betStatus: {
    tags: ['play'],
    summary: 'The wallet transactions of one bet (bet, win, rollback), for polling.',
    security: bearer,
    params: docSchema(z.object({ tx_id: z.string() })),
    response: {
      200: closed({ transactions: { type: 'array', items: betTransaction } }),
      ...playErr,
      404: problem('Not (yet) projected, or not this session’s bet.'),
    },
  },
} as const;
