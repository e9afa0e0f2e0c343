/**
 * Route schemas of the operator portal for /openapi.json (the handlers validate with the zod rules
 * of input.ts; response schemas also serialise, so every field a handler answers is listed).
 * Portal errors are the /api form `{error, success:false, reason?}` (ErrorBody); the admin link
 * route's are problem JSON like every /admin route.
 */
import { z } from 'zod';
import { docSchema } from '../access/input.ts';
import { adminErr, closed, operatorSettingsProperties, problem, readinessSchema } from '../access/schemas.ts';
import {
  emptyBody,
  portalCallbackQuery,
  portalLinkBody,
  portalRedriveBody,
  reconciliationQuery,
  rotateBody,
  sessionBody,
  settingsBody,
  txParams,
} from './input.ts';

const tags = ['portal'];
/** The portal's credential: the session cookie (components.securitySchemes.portalSession). */
const portal = [{ portalSession: [] }];
const err = (description: string) => ({ $ref: 'ErrorBody#', description }) as const;
const readErr = {
  401: err('No portal session (no cookie, or ended, expired, its operator disabled).'),
  429: err('The failed-credential budget of this IP is spent; Retry-After says for how long.'),
} as const;
const writeErr = {
  ...readErr,
  400: err('Invalid body (the field and rule are named).'),
  403: err('x-csrf-token missing or not the session\u2019s CSRF token (reason "csrf_failed").'),
} as const;

const str = { type: 'string' } as const;
const int = { type: 'integer' } as const;
const num = { type: 'number' } as const;
const bool = { type: 'boolean' } as const;
const nStr = { type: 'string', nullable: true } as const;
const nInt = { type: 'integer', nullable: true } as const;
const time = { type: 'string', format: 'date-time' } as const;
const nTime = { type: 'string', format: 'date-time', nullable: true } as const;
const anyObject = { type: 'object', additionalProperties: true } as const;
/** An object whose listed properties are all required. */
const obj = closed;

const sessionView = obj({
  operator_id: str,
  name: str,
  csrf_token: { ...str, description: 'Send it back in x-csrf-token on every POST, PATCH and DELETE.' },
  expires_at: time,
});
const operatorView = obj(
  operatorSettingsProperties,
  "The session's operator's callback settings (no token, secret or retry policy).",
);
const readinessView = {
  ...readinessSchema,
  description: 'The last readiness probe (null before the first), as GET /admin/operators/{id} shows it.',
} as const;
const callbackFields = {
  tx_id: { ...int, description: "The callback's provider_tx_id." },
  kind: { type: 'string', enum: ['bet', 'win', 'rollback', 'close'] },
  bet_tx_id: int,
  user_id: str,
  round_id: { ...nInt, description: 'The round of the bet.' },
  amount_minor: { ...int, description: 'Minor units of the currency.' },
  currency: str,
  status: { type: 'string', enum: ['due', 'in_flight', 'done', 'parked', 'skipped'] },
  attempts: { ...int, description: 'Attempts of the current schedule (0 after a re-drive).' },
  next_attempt_at: { ...nTime, description: 'When it is tried next; null once done, parked or skipped.' },
  last_answer: nStr,
  last_error: nStr,
  created_at: time,
  updated_at: time,
};
const callbackView = obj(callbackFields, 'A wallet callback of the operator.');
const headers = {
  type: 'object',
  additionalProperties: { type: 'string' },
  description: 'content-type, webhook-id, webhook-timestamp, webhook-signature (a MAC, never the secret).',
} as const;
const attemptView = obj({
  attempt: { ...int, description: '1-based over the callback’s whole life.' },
  at: time,
  request: {
    type: 'object',
    required: ['method', 'url', 'headers', 'body'],
    properties: { method: nStr, url: nStr, headers: { ...headers, nullable: true }, body: nStr },
  },
  response: obj({ status: nInt, body: nStr }),
  latency_ms: int,
  class: {
    ...str,
    description: 'How the answer counted: ok, duplicate, mismatch, unknown_transaction, refused, failed.',
  },
  code: nStr,
  error: nStr,
  next_attempt_at: nTime,
});
const exchangeView = obj({
  step: str,
  request: obj({ method: str, url: str, headers, signing: str, body: str }),
  response: obj({ status: nInt, body: nStr }),
  error: nStr,
  latency_ms: int,
  class: str,
});
const ledgerRow = obj({
  tx_id: int,
  kind: { type: 'string', enum: ['bet', 'win', 'rollback', 'close'] },
  bet_tx_id: int,
  user_id: str,
  round_id: int,
  game: str,
  amount_minor: { ...int, description: 'Minor units.' },
  currency: str,
  state: {
    type: 'string',
    enum: ['booked', 'not_booked', 'outstanding'],
    description:
      'What the operator ledger should show: booked (money moved), not_booked (refused or compensated), outstanding (not final yet).',
  },
  status: { ...str, description: 'The wallet read model status it comes from.' },
  created_at: time,
  finished_at: nTime,
});

export const portalSchemas = {
  link: {
    tags: ['operators'],
    summary:
      'Mint a single-use operator portal sign-in link (admin): valid ttl_s seconds (60..3600, default 900); only its hash is stored.',
    body: docSchema(portalLinkBody),
    params: docSchema(z.object({ id: z.string() })),
    response: {
      201: obj({
        operator_id: str,
        url: { ...str, description: '<PUBLIC_BASE_URL>/console/#portal-link=<token>' },
        expires_at: time,
      }),
      ...adminErr,
      404: problem('No enabled operator with this id.'),
    },
  },
  signIn: {
    tags,
    summary: 'Sign in to the operator portal with a portal link token; sets the HttpOnly session cookie.',
    description:
      'The link is spent (single use). Sets portal_session (HttpOnly; SameSite=Strict; Path=/; Secure over https; 8 h). No CSRF header needed. A refused token spends a point of the IP’s failed-credential budget.',
    body: docSchema(sessionBody),
    response: {
      200: sessionView,
      400: err('Invalid body (the field and rule are named).'),
      401: err('link_token unknown, already used or expired.'),
      429: readErr[429],
    },
  },
  session: {
    tags,
    summary: 'The current portal session.',
    security: portal,
    response: { 200: sessionView, ...readErr },
  },
  signOut: {
    tags,
    summary: 'Sign out: ends the session and clears the cookie.',
    security: portal,
    response: { 204: { description: 'Signed out.', type: 'null' }, ...writeErr },
  },
  overview: {
    tags,
    summary: "The operator's readiness, circuit breaker and callback figures over the last hour.",
    security: portal,
    response: {
      200: obj({
        operator: operatorView,
        readiness: readinessView,
        breaker: obj({
          state: { type: 'string', enum: ['closed', 'open'] },
          failures: int,
          retry_at: nTime,
          last_error: nStr,
        }),
        callbacks: obj({
          per_minute: {
            type: 'array',
            description: 'Every minute of the last hour, oldest first.',
            items: obj({ minute: time, total: int, succeeded: int, failed: int }),
          },
          last_hour: obj({
            total: int,
            succeeded: int,
            failed: int,
            success_rate: { ...num, nullable: true, description: '0..1; null without attempts.' },
            latency_ms: obj({ p50: { ...num, nullable: true }, p99: { ...num, nullable: true } }),
          }),
          retrying: int,
          parked: int,
        }),
      }),
      ...readErr,
    },
  },
  probe: {
    tags,
    summary: "Run the operator's readiness probe now.",
    security: portal,
    body: docSchema(emptyBody),
    response: { 200: obj({ readiness: readinessView }), ...writeErr },
  },
  settings: {
    tags,
    summary: "The operator's callback settings.",
    security: portal,
    response: { 200: obj({ operator: operatorView }), ...readErr },
  },
  updateSettings: {
    tags,
    summary:
      "Change the operator's callback settings (the admin PATCH's rules); the readiness probe runs again and the answer shows it.",
    security: portal,
    body: docSchema(settingsBody),
    response: { 200: obj({ operator: operatorView, readiness: readinessView }), ...writeErr },
  },
  callbacks: {
    tags,
    summary: "Search the operator's wallet callbacks, newest change first.",
    description:
      'from and to select the last change in [from, to); to before from is 400. status default: any.',
    security: portal,
    querystring: docSchema(portalCallbackQuery),
    response: {
      200: obj({ callbacks: { type: 'array', items: callbackView } }),
      ...readErr,
      400: err('Invalid query (the parameter and rule are named).'),
    },
  },
  callback: {
    tags,
    summary:
      'One callback of the operator with every attempt: request, signature headers, answer, latency, class.',
    security: portal,
    params: docSchema(txParams),
    response: {
      200: obj({
        ...callbackFields,
        attempts: {
          type: 'array',
          items: attemptView,
          description: 'The newest 100 attempts at most, oldest first (newest last).',
        },
        attempts_total: {
          ...int,
          description: 'Every recorded attempt of the callback; more than attempts.length when bounded.',
        },
      }),
      ...readErr,
      400: err('tx_id is not a provider_tx_id.'),
      404: err('No callback of this operator has this provider_tx_id (another operator’s included).'),
    },
  },
  redrive: {
    tags,
    summary:
      "Re-drive the operator's parked or retrying callbacks: due now with a fresh retry schedule (tx_ids, or all: true).",
    security: portal,
    body: docSchema(portalRedriveBody),
    response: {
      200: obj({ redriven: { type: 'array', items: callbackView, description: 'As they stood before.' } }),
      ...writeErr,
    },
  },
  testCallback: {
    tags,
    summary:
      "Send one signed Balance request to the operator (its latest player, or the readiness probe's): no money moves.",
    security: portal,
    body: docSchema(emptyBody),
    response: {
      200: obj({
        request: obj({ method: str, url: str, headers, body: str }),
        response: obj({ status: nInt, body: nStr }),
        latency_ms: int,
        class: { type: 'string', enum: ['ok', 'failed'] },
        error: nStr,
      }),
      ...writeErr,
    },
  },
  conformance: {
    tags,
    summary: 'Run the wallet conformance kit against the operator as configured (at most about a minute).',
    description:
      'No row starts after 60 s (the rest fail as "not run"); each request waits at most the operator timeout plus 10 s.',
    security: portal,
    body: docSchema(emptyBody),
    response: {
      200: obj({
        passed: bool,
        started_at: time,
        player: obj({ user_id: str, currency: str, session_token: str }),
        rows: {
          type: 'array',
          items: obj({
            id: str,
            title: str,
            rule: str,
            ok: bool,
            detail: str,
            ms: int,
            exchanges: { type: 'array', items: exchangeView },
          }),
        },
      }),
      ...writeErr,
    },
  },
  rotate: {
    tags,
    summary: 'Rotate the signing secret: the new one is shown once; the old one keeps signing for overlap_s.',
    description:
      'During the overlap every request to the operator carries both signatures in webhook-signature (Standard Webhooks, space-delimited).',
    security: portal,
    body: docSchema(rotateBody),
    response: {
      200: obj({
        signing_secret: { ...str, description: 'whsec_…, shown once.' },
        previous_valid_until: time,
      }),
      ...writeErr,
      409: err(
        'A previous rotation is still in its overlap (its replaced secret still signs); the message says until when. Nothing changed: retry after that time, or send force: true to drop that secret at once.',
      ),
    },
  },
  reconciliation: {
    tags,
    summary:
      "The operator's real-money wallet transactions of one UTC day with their ledger state (JSON or CSV).",
    description:
      'format=csv: text/csv with a header row and the same columns as the JSON rows, as an attachment reconciliation-<operator>-<date>.csv.',
    security: portal,
    querystring: docSchema(reconciliationQuery),
    response: {
      200: {
        description: 'The day’s transactions.',
        content: {
          'application/json': {
            schema: obj({
              operator_id: str,
              date: { type: 'string', format: 'date' },
              transactions: { type: 'array', items: ledgerRow },
              totals: anyObject,
            }),
          },
          'text/csv': { schema: str },
        },
      },
      ...readErr,
      400: err('Invalid query (the parameter and rule are named).'),
    },
  },
} as const;
