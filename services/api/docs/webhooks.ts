/**
 * The operator callbacks as an OpenAPI 3.1 document with `webhooks`, served at
 * GET /openapi-webhooks.json: what the platform sends to an operator's wallet (bet, win, balance,
 * rollback, round end; form A POST on the operator's paths, form B GET with a JSON body on fixed
 * paths) and the answers it expects, signed with the Standard Webhooks headers. The bodies are the
 * JSON Schemas of schemas/callbacks/ (the ones the wallet saga checks every request against), taken in
 * whole with their references rewritten to components. /openapi.json stays OpenAPI 3.0.0 (the REST
 * contract's stated version), which has no webhooks; this is its companion. Validated by
 * @readme/openapi-parser in the tests (services/api/docs/documents.unit.test.ts); docs/operators.md
 * explains each exchange.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { CALLBACK_SCHEMAS_DIR } from '../../../lib/http/callback-schemas.ts';
import { API_VERSION } from '../openapi.ts';

const DIR = CALLBACK_SCHEMAS_DIR;

/** A callback schema file's name as a component name: `win-a.request.json` → `win-a.request`. */
const componentOf = (file: string) => file.replace(/\.json$/, '');

/**
 * Rewrites `defs.json#/definitions/x` and `<file>.json` references, and local `#…` ones of the file
 * `self`, to the document's components.
 */
function relink(node: unknown, self: string): unknown {
  if (Array.isArray(node)) return node.map((n) => relink(n, self));
  if (node === null || typeof node !== 'object') return node;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(node)) {
    if (k === '$schema' || k === '$id') continue;
    if (k === '$ref' && typeof v === 'string') {
      const [named, pointer = ''] = v.split('#');
      const file = named || self;
      const def = pointer.match(/^\/definitions\/(.+)$/);
      if (file === 'defs.json' && def) out[k] = `#/components/schemas/defs.${def[1]}`;
      else out[k] = `#/components/schemas/${componentOf(file)}${pointer}`;
      continue;
    }
    out[k] = relink(v, self);
  }
  return out;
}

/** Every schema of schemas/callbacks/ under components.schemas (defs.json's definitions one by one). */
function callbackSchemas(): Record<string, unknown> {
  const schemas: Record<string, unknown> = {};
  for (const file of readdirSync(DIR)
    .filter((f) => f.endsWith('.json'))
    .sort()) {
    const json = JSON.parse(readFileSync(join(DIR, file), 'utf8')) as Record<string, unknown>;
    if (file === 'defs.json') {
      for (const [name, def] of Object.entries(json.definitions as Record<string, unknown>))
        schemas[`defs.${name}`] = relink(def, file);
    } else schemas[componentOf(file)] = relink(json, file);
  }
  return schemas;
}

const SIGNATURE_HEADERS = [
  {
    name: 'webhook-id',
    in: 'header',
    required: true,
    description: 'The message id (Standard Webhooks); the same on every retry of one callback.',
    schema: { type: 'string' },
  },
  {
    name: 'webhook-timestamp',
    in: 'header',
    required: true,
    description: 'Unix seconds of this attempt; refuse one far from your clock.',
    schema: { type: 'string', pattern: '^[0-9]+$' },
  },
  {
    name: 'webhook-signature',
    in: 'header',
    required: true,
    description:
      'Space-separated `v1,<base64 HMAC-SHA256 of "<id>.<timestamp>.<body>">` with the signing secret.',
    schema: { type: 'string' },
  },
];

/** One callback: `method` on a path the operator configures (form A) or a fixed path (form B). */
function webhook(
  method: 'post' | 'get',
  summary: string,
  description: string,
  request: string,
  response: string,
): Record<string, unknown> {
  return {
    [method]: {
      summary,
      description,
      parameters: SIGNATURE_HEADERS,
      requestBody: {
        required: true,
        content: { 'application/json': { schema: { $ref: `#/components/schemas/${request}` } } },
      },
      responses: {
        200: {
          description:
            'Done (or a refusal in the body, for operators whose answer preset says so: docs/operators.md "Answers").',
          content: { 'application/json': { schema: { $ref: `#/components/schemas/${response}` } } },
        },
        default: {
          description:
            'Classified by the answer table of docs/operators.md: a refusal that moves no money, or a failure (a bet is then rolled back; a win, rollback or round close is retried).',
        },
      },
    },
  };
}

/** The OpenAPI 3.1 document of the operator callbacks (plain JSON). */
export function buildWebhooksDocument(): Record<string, unknown> {
  return {
    openapi: '3.1.0',
    info: {
      title: 'Casino platform: operator wallet callbacks',
      version: API_VERSION,
      description:
        'The callbacks the platform sends to an operator registered with POST /admin/operators (its seamless wallet). ' +
        'provider_tx_id is the idempotency key of every transaction. Form A posts to the paths the operator chose; form B ' +
        'sends GET with a JSON body to /webhooks/platform/rewards and /webhooks/platform/rollback. Every request is signed ' +
        '(Standard Webhooks). The REST API is /openapi.json.',
    },
    webhooks: {
      bet: webhook(
        'post',
        'Register Bet (forms A and B, bet_path)',
        'A player placed a bet: debit the stake.',
        'bet.request',
        'bet.response',
      ),
      win: webhook(
        'post',
        'Register Win (form A, win_path)',
        'Credit a win, or 0 to close a lost round (round close zero-win).',
        'win-a.request',
        'win-a.response',
      ),
      balance: webhook(
        'post',
        'Balance (forms A and B, balance_path)',
        "The player's balance.",
        'balance.request',
        'balance.response',
      ),
      rollbackA: webhook(
        'post',
        'Rollback (form A, rollback_path)',
        'Refund a bet that did not play.',
        'rollback-a.request',
        'rollback.response',
      ),
      roundEndA: webhook(
        'post',
        'Round end (form A, round_end_path)',
        "A lost bet's round is over (round close by call).",
        'round-end-a.request',
        'round-end.response',
      ),
      rewardsB: webhook(
        'get',
        'Register Earnings (form B, /webhooks/platform/rewards)',
        'Credit a win; GET with a JSON body.',
        'rewards-b.request',
        'rewards-b.response',
      ),
      rollbackB: webhook(
        'get',
        'Rollback Bet (form B, /webhooks/platform/rollback)',
        'Refund a bet; GET with a JSON body.',
        'rollback-b.request',
        'rollback.response',
      ),
      roundEndB: webhook(
        'post',
        'Round end (form B, round_end_path)',
        "A lost bet's round is over.",
        'round-end-b.request',
        'round-end.response',
      ),
    },
    components: { schemas: callbackSchemas() },
  };
}
