/**
 * JSON schemas of the auth endpoints: they validate bodies (fastify/ajv), serialise responses and
 * feed the generated OpenAPI document. Shapes the seed leaves open are decided here.
 */
import { SCOPES } from '../../../lib/auth/scopes.ts';
import { boundedText, HTTP_ORIGIN_PATTERN, PORT_PATTERN } from '../input-policy.ts';
import { BROWSER_FIELD_MAX } from './browser-key.ts';

/** RFC 1123 host name labels (either case), optionally `:port` (browser-key.ts checkBrowserKeyInput). */
const BOUND_DOMAIN_PATTERN = `^[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?(?:\\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*(?::${PORT_PATTERN})?$`;

const err = (description: string) => ({ $ref: 'ErrorBody#', description }) as const;
const authErrors = {
  401: err('Missing, malformed, unknown, expired or revoked credential, or Origin not allowed.'),
  403: err('Valid credential without the scope (reason "scope").'),
  429: err('Rate limit exceeded.'),
} as const;

export const keyView = {
  type: 'object',
  required: ['id', 'name', 'kind', 'scopes', 'rate_limit', 'allowed_origins', 'admin', 'created_at'],
  properties: {
    id: { type: 'string', description: 'key_ + 16 hex; not the secret.' },
    name: { type: 'string' },
    kind: { type: 'string', enum: ['private', 'public'] },
    scopes: { type: 'array', items: { type: 'string' } },
    rate_limit: { type: 'integer', description: 'Requests per minute.' },
    allowed_origins: { type: 'array', items: { type: 'string' } },
    admin: { type: 'boolean' },
    bound_domain: { type: ['string', 'null'], description: 'Browser-bound keys only.' },
    publish_games: {
      type: 'array',
      items: { type: 'string' },
      description: 'Games whose rounds this key may open and finish (its publish:rounds:<game> scopes).',
    },
    created_at: { type: 'string', format: 'date-time' },
    revoked_at: { type: ['string', 'null'], format: 'date-time' },
    last_used: {
      type: ['string', 'null'],
      format: 'date-time',
      description: 'Last authenticated request seen by this API process.',
    },
  },
} as const;

export const scopesSchema = {
  tags: ['auth'],
  summary: 'The scopes a key may hold (public).',
  response: {
    200: {
      type: 'object',
      required: ['scopes'],
      properties: {
        scopes: {
          type: 'array',
          items: {
            type: 'object',
            required: ['name', 'description'],
            properties: { name: { type: 'string' }, description: { type: 'string' } },
          },
        },
      },
    },
  },
} as const;

export const tokenSchema = {
  tags: ['auth'],
  summary: 'A 15 s token from the key in X-API-Key or Authorization: Bearer (a token cannot make tokens).',
  response: {
    200: {
      type: 'object',
      required: ['success', 'token', 'expires_in', 'usage'],
      properties: {
        success: { type: 'boolean' },
        token: { type: 'string', description: 'tok_ + 98 hex' },
        expires_in: { type: 'integer', description: 'Seconds (15).' },
        usage: { type: 'string' },
      },
    },
    ...authErrors,
  },
} as const;

export const browserKeySchema = {
  tags: ['auth'],
  summary: 'The public key of a (visitor_id, bound_domain) pair; the same pair gives the same key (public).',
  body: {
    type: 'object',
    additionalProperties: false,
    required: ['visitor_id', 'bound_domain'],
    properties: {
      visitor_id: boundedText(BROWSER_FIELD_MAX, {
        description: 'Browser fingerprint id, 1..128 characters.',
      }),
      bound_domain: boundedText(BROWSER_FIELD_MAX, {
        pattern: BOUND_DOMAIN_PATTERN,
        description: 'Host name (RFC 1123 labels), optionally :port, 1..128 characters.',
      }),
    },
  },
  response: {
    200: {
      type: 'object',
      required: ['success', 'key', 'expires_at', 'new'],
      properties: {
        success: { type: 'boolean' },
        key: {
          type: 'string',
          description: 'pk_live_ + 64 hex; allowed origins https:// and http:// bound_domain.',
        },
        expires_at: { type: 'integer', description: '0: no expiry.' },
        new: { type: 'boolean', description: 'true when created by this request.' },
      },
    },
    400: err('Invalid visitor_id or bound_domain.'),
    403: err('The pair’s key was revoked (reason "revoked").'),
    429: err('Rate limit exceeded.'),
  },
} as const;

/** Scopes a public key may hold: every scope but admin. */
const PUBLIC_SCOPES = SCOPES.filter((x) => x !== 'admin');
const scopeList = (allowed: readonly string[]) =>
  ({
    type: 'array',
    minItems: 1,
    maxItems: SCOPES.length,
    items: { type: 'string', enum: allowed },
  }) as const;

export const createKeySchema = {
  tags: ['auth'],
  summary: 'Create a key (admin). The secret is in the response only, once.',
  body: {
    type: 'object',
    additionalProperties: false,
    required: ['name', 'scopes'],
    properties: {
      name: boundedText(128),
      scopes: scopeList(SCOPES),
      rate_limit: {
        type: 'integer',
        minimum: 1,
        maximum: 1_000_000,
        description: 'Requests per minute. Default 1000 private, 100 public.',
      },
      kind: { type: 'string', enum: ['private', 'public'], default: 'private' },
      allowed_origins: {
        type: 'array',
        maxItems: 32,
        items: { type: 'string', maxLength: 256, pattern: HTTP_ORIGIN_PATTERN },
        description: 'Public keys: 1..32 http(s) origins, e.g. "https://example.com". Private keys: none.',
      },
    },
    // Private (the default): no origins. Public: at least one origin and no admin scope.
    oneOf: [
      {
        properties: {
          kind: { type: 'string', enum: ['private'] },
          allowed_origins: { type: 'array', maxItems: 0 },
        },
      },
      {
        required: ['kind', 'allowed_origins'],
        properties: {
          kind: { type: 'string', enum: ['public'] },
          allowed_origins: { type: 'array', minItems: 1 },
          scopes: scopeList(PUBLIC_SCOPES),
        },
      },
    ],
  },
  response: {
    201: {
      type: 'object',
      required: ['success', 'key', 'secret'],
      properties: { success: { type: 'boolean' }, key: keyView, secret: { type: 'string' } },
    },
    400: err('Invalid body.'),
    ...authErrors,
  },
} as const;

export const listKeysSchema = {
  tags: ['auth'],
  summary: 'Every key that is not deleted, revoked ones included (admin).',
  response: {
    200: {
      type: 'object',
      required: ['success', 'keys'],
      properties: { success: { type: 'boolean' }, keys: { type: 'array', items: keyView } },
    },
    ...authErrors,
  },
} as const;

const idParams = {
  type: 'object',
  required: ['id'],
  properties: { id: { type: 'string', description: 'key_ + 16 hex' } },
} as const;

export const revokeKeySchema = {
  tags: ['auth'],
  summary: 'Revoke a key: it and its tokens are refused everywhere within a second (admin).',
  params: idParams,
  response: {
    200: { type: 'object', properties: { success: { type: 'boolean' }, key: keyView } },
    404: err('No such key.'),
    409: err('The last active admin key: create another admin key first.'),
    ...authErrors,
  },
} as const;

export const deleteKeySchema = {
  tags: ['auth'],
  summary: 'Delete a key: refused like a revoked one and no longer listed (admin).',
  params: idParams,
  response: {
    200: {
      type: 'object',
      properties: { success: { type: 'boolean' }, id: { type: 'string' }, deleted: { type: 'boolean' } },
    },
    404: err('No such key.'),
    409: err('The last active admin key: create another admin key first.'),
    ...authErrors,
  },
} as const;
