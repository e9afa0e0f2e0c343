/**
 * The one input policy of the API (issue 13 item 1), for every text that reaches storage or the log:
 *
 * 1. Valid UTF-8 without NUL: a JSON body whose bytes are not valid UTF-8 is refused before it is
 *    parsed (Node would otherwise turn bad bytes into U+FFFD silently), and every string of a body
 *    or query, keys included, that holds U+0000 (Postgres refuses it in text) or a lone surrogate
 *    (`"\ud800"`: not encodable as UTF-8) is refused by an app-wide preValidation hook.
 * 2. A documented maximum length per field: every string of a request schema has `maxLength` (the
 *    helpers below), listed in docs/decisions.md "Issue 13".
 * 3. Strict types: no coercion (`"12"` is not a number, `12` is not a string, `["a"]` is not "a").
 * 4. Unknown fields: refused everywhere (400 naming them); every body schema is closed
 *    (`additionalProperties: false`, zod `.strict()`) and nothing is silently dropped.
 * 5. Every violation is a 400 whose text starts with the field: `visitor_id: must be string`,
 *    `result.point: …` (the whole body: `body: …`).
 *
 * Routes validated by fastify (ajv) get 3-5 from {@link AJV_OPTIONS} and {@link formatSchemaErrors};
 * routes validating with zod in the handler (services/api/access/input.ts parseInput) get them from
 * their `.strict()` schemas. 1 applies to every route through {@link registerInputPolicy}.
 */
import { isUtf8 } from 'node:buffer';
import type { FastifyInstance, FastifySchemaValidationError } from 'fastify';
import { InvalidInputError } from './errors.ts';

/** Options of the app's ajv (fastify `ajv.customOptions`): no coercion, nothing removed, defaults kept. */
export const AJV_OPTIONS = {
  coerceTypes: false,
  removeAdditional: false,
  useDefaults: true,
  allErrors: false,
} as const;

/**
 * A field path for messages, as zod's parseInput names fields: `/a/0/b` → `a.0.b`; the whole body
 * or query (empty path) → `body` / `querystring`.
 */
function fieldOf(dataVar: string, instancePath: string, extra?: string): string {
  const parts = [...instancePath.split('/').filter(Boolean), ...(extra ? [extra] : [])];
  return parts.length > 0 ? parts.join('.') : dataVar;
}

/**
 * Properties that select a branch of a `oneOf` (e.g. `kind` of POST /api/auth/keys): an error
 * saying a branch's tag does not match only tells which branch does not apply, so it is skipped in
 * favour of the error of the branch that does.
 */
const BRANCH_TAGS = new Set(['kind', 'game_slug', 'number']);

function isBranchMismatch(e: FastifySchemaValidationError): boolean {
  const schemaPath = (e as { schemaPath?: string }).schemaPath ?? '';
  if (e.keyword === 'oneOf') return true;
  if (!/\/oneOf\/\d+\//.test(schemaPath)) return false;
  const params = e.params as { missingProperty?: string };
  const prop = e.instancePath.split('/').pop() ?? '';
  return (
    (e.keyword === 'enum' && BRANCH_TAGS.has(prop)) ||
    (e.keyword === 'required' && BRANCH_TAGS.has(params.missingProperty ?? ''))
  );
}

/**
 * fastify's `schemaErrorFormatter`: the first error as `<field>: <rule>` (unknown fields as
 * `x: unknown field`), an InvalidInputError answered 400 by the one error mapping.
 */
export function formatSchemaErrors(errors: FastifySchemaValidationError[], dataVar: string): Error {
  const e = errors.find((x) => !isBranchMismatch(x));
  if (e) return new InvalidInputError('INVALID_INPUT', describe(e, dataVar));
  // No branch applies: name the tag and every value the branches allow.
  const tags = errors.filter((x) => x.keyword === 'enum');
  const first = tags[0] ?? errors[0];
  if (!first) return new InvalidInputError('INVALID_INPUT', `${dataVar}: invalid`);
  const at = first.instancePath;
  const allowed = tags
    .filter((x) => x.instancePath === at)
    .flatMap((x) => (x.params as { allowedValues?: unknown[] }).allowedValues ?? []);
  const text =
    first.keyword === 'enum' ? `${fieldOf(dataVar, at)}: ${oneOfText(allowed)}` : describe(first, dataVar);
  return new InvalidInputError('INVALID_INPUT', text);
}

function oneOfText(allowed: readonly unknown[]): string {
  return `must be one of ${[...new Set(allowed)].map((v) => JSON.stringify(v)).join(', ')}`;
}

/** One ajv error as `<field>: <rule>`. */
function describe(e: FastifySchemaValidationError, dataVar: string): string {
  const params = e.params as {
    additionalProperty?: string;
    missingProperty?: string;
    allowedValues?: unknown[];
  };
  if (e.keyword === 'additionalProperties' && params.additionalProperty !== undefined)
    return `${fieldOf(dataVar, e.instancePath, params.additionalProperty)}: unknown field`;
  if (e.keyword === 'required' && params.missingProperty !== undefined)
    return `${fieldOf(dataVar, e.instancePath, params.missingProperty)}: is required`;
  if (e.keyword === 'enum' && params.allowedValues)
    return `${fieldOf(dataVar, e.instancePath)}: ${oneOfText(params.allowedValues)}`;
  return `${fieldOf(dataVar, e.instancePath)}: ${e.message ?? 'invalid'}`;
}

const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/** Why `s` cannot be stored as text, or undefined when it can. */
export function textProblem(s: string): string | undefined {
  if (s.includes('\u0000')) return 'must not contain NUL (U+0000)';
  if (LONE_SURROGATE.test(s)) return 'must be valid Unicode (a lone surrogate cannot be encoded as UTF-8)';
  return undefined;
}

/**
 * The first string of `value` (keys included, depth first) that breaks {@link textProblem}.
 * @param path the field path so far ('' at the top of a body or query); `top` names the whole value.
 * @returns `field: rule`, or undefined when every string is fine.
 */
export function findTextProblem(value: unknown, top: string, path = ''): string | undefined {
  if (typeof value === 'string') {
    const p = textProblem(value);
    return p && `${path || top}: ${p}`;
  }
  if (typeof value !== 'object' || value === null) return undefined;
  for (const [k, v] of Object.entries(value)) {
    const kp = textProblem(k);
    if (kp) return `${path || top}: a field name ${kp}`;
    const p = findTextProblem(v, top, path ? `${path}.${k}` : k);
    if (p) return p;
  }
  return undefined;
}

/**
 * Registers the app-wide parts of the policy on `app` (the root instance, so every route and
 * plugin inherits them): the UTF-8-checking JSON parser and the NUL/surrogate hook over body and
 * query. Path parameters are checked by their routes (a game slug by its pattern: seed 000's
 * "Invalid game slug"), and never stored.
 */
export function registerInputPolicy(app: FastifyInstance): void {
  const parseJson = app.getDefaultJsonParser('error', 'error');
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'buffer' }, (req, body, done) => {
    const bytes = body as Buffer;
    if (!isUtf8(bytes)) {
      done(new InvalidInputError('INVALID_INPUT', 'body: must be valid UTF-8'), undefined);
      return;
    }
    parseJson(req, bytes.toString('utf8'), done);
  });
  app.addHook('preValidation', async (req) => {
    const problem = findTextProblem(req.body, 'body') ?? findTextProblem(req.query, 'querystring');
    if (problem) throw new InvalidInputError('INVALID_INPUT', problem);
  });
}

// ---- Schema helpers (JSON schema for routes validated by fastify; see access/input.ts for zod) ----

/**
 * Text that can be stored (rule 1 above) as a JSON-schema pattern, so /openapi.json says what the
 * server refuses: no NUL. Lone surrogates are not in it: a JSON text is UTF-8 (RFC 8259 §8.1), in
 * which they cannot be written, and regex engines of other languages (Rust's, which schemathesis
 * validates with) cannot even name them; the hook refuses a `\\ud800` escape all the same.
 */
export const TEXT_PATTERN = '^[^\\u0000]*$';
/** {@link TEXT_PATTERN} as a RegExp, for zod rules. */
export const TEXT_RE = new RegExp(TEXT_PATTERN, 'u');

/**
 * A text field of 1..`max` characters for a route schema, matching `pattern` (which must itself
 * exclude NUL) or else {@link TEXT_PATTERN}.
 */
export function boundedText(max: number, extra: { pattern?: string; description?: string } = {}) {
  return { type: 'string', minLength: 1, maxLength: max, pattern: TEXT_PATTERN, ...extra } as const;
}

/**
 * A closed object schema (unknown fields refused, item 4 above) with the given properties.
 * `required` lists the fields that must be present.
 */
export function closedObject<P extends Record<string, unknown>>(
  properties: P,
  required: (keyof P & string)[],
) {
  return { type: 'object', additionalProperties: false, required, properties } as const;
}

/** Decimal port 1..65535 (no leading zero), as a regular-expression fragment. */
export const PORT_PATTERN =
  '(?:6553[0-5]|655[0-2][0-9]|65[0-4][0-9]{2}|6[0-4][0-9]{3}|[1-5][0-9]{4}|[1-9][0-9]{0,3})';
const IPV4_OCTET = '(?:25[0-5]|2[0-4][0-9]|1[0-9]{2}|[1-9]?[0-9])';
/**
 * A host WHATWG URL parsing always accepts: a dotted IPv4 address, or names of letters, digits and
 * single inner hyphens whose last label starts with a letter (a numeric last label would be read
 * as IPv4, and `--` could make an invalid punycode `xn--` label).
 */
export const URL_HOST_PATTERN = `(?:(?:${IPV4_OCTET}\\.){3}${IPV4_OCTET}|(?:[A-Za-z0-9]+(?:-[A-Za-z0-9]+)*\\.)*[A-Za-z][A-Za-z0-9]*(?:-[A-Za-z0-9]+)*)`;
/** RFC 3986 path characters (unreserved, sub-delims, `:`, `@`, `%`, `/`). */
const PATH_CHARS = "[A-Za-z0-9._~!$&'()*+,;=:@%/-]";
/** An http(s) origin: scheme, host, optional port, optional trailing slash. */
export const HTTP_ORIGIN_PATTERN = `^[Hh][Tt][Tt][Pp][Ss]?://${URL_HOST_PATTERN}(?::${PORT_PATTERN})?/?$`;
/** An http(s) URL without query or fragment. */
export const HTTP_BASE_URL_PATTERN = `^[Hh][Tt][Tt][Pp][Ss]?://${URL_HOST_PATTERN}(?::${PORT_PATTERN})?(?:/${PATH_CHARS}*)?$`;
/** An http(s) URL with an optional query and no fragment. */
export const HTTP_URL_PATTERN = `^[Hh][Tt][Tt][Pp][Ss]?://${URL_HOST_PATTERN}(?::${PORT_PATTERN})?(?:/${PATH_CHARS}*)?(?:\\?(?:${PATH_CHARS}|\\?)*)?$`;
