/**
 * The one input policy of the API, for every text that reaches storage or the log:
 *
 * 1. Valid UTF-8 without NUL: a JSON body whose bytes are not valid UTF-8 is refused before it is
 *    parsed (Node would otherwise turn bad bytes into U+FFFD silently), and every string of a body
 *    or query, keys included, that holds U+0000 (Postgres refuses it in text) or a lone surrogate
 *    (`"\ud800"`: not encodable as UTF-8) is refused by an app-wide preValidation hook.
 * 2. A documented maximum length per field: every string of a request schema has `maxLength` (the
 *    helpers below), listed in docs/decisions/access/0009-one-input-policy.md.
 * 3. Strict types: no coercion (`"12"` is not a number, `12` is not a string, `["a"]` is not "a").
 * 4. Unknown fields: refused everywhere (400 naming them); every body schema is closed
 *    (`additionalProperties: false`, zod `.strict()`) and nothing is silently dropped. Unknown
 *    query parameters likewise: every route's querystring schema is closed by
 *    {@link closeQuerystring} and checked by one hook (`limit: …`, `foo: unknown query parameter`).
 * 5. Every violation is a 400 whose text starts with the field: `visitor_id: must be string`,
 *    `result.point: …` (the whole body: `body: …`).
 * 6. Before anything is parsed or walked: a JSON body nested deeper than {@link MAX_JSON_DEPTH}
 *    levels is a 400 (a deep body would overflow the stack of every recursive walk), a body that
 *    is not `application/json` in UTF-8 is a 415, a query that does not percent-decode to UTF-8
 *    is a 400 naming the parameter, and a path parameter holding NUL or a lone surrogate is a 400
 *    naming the parameter (Postgres text cannot hold NUL).
 *
 * Routes validated by fastify (ajv) get 3-5 from {@link AJV_OPTIONS} and {@link formatSchemaErrors};
 * routes validating with zod in the handler (services/api/access/input.ts parseInput) get them from
 * their `.strict()` schemas. 1, the query half of 4, and 6 apply to every route through
 * {@link registerInputPolicy}.
 */
import { isUtf8 } from 'node:buffer';
import type { FastifyInstance, FastifySchemaValidationError } from 'fastify';
import { InvalidInputError, UnsupportedMediaTypeError } from './errors.ts';

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

/** The deepest nesting of arrays and objects a JSON body may have (the whole body is level 1). */
export const MAX_JSON_DEPTH = 64;

/**
 * Whether the JSON text `bytes` (UTF-8) nests arrays and objects deeper than `max` levels, in one
 * pass over the bytes: no parse and no recursion, so a body nested thousands of levels deep is
 * measured before anything walks it recursively (JSON.parse, ajv, {@link findTextProblem}).
 * Brackets inside strings do not count. Bytes of multi-byte UTF-8 characters are all ≥ 0x80, so
 * they are never taken for a quote, backslash or bracket.
 */
export function nestsDeeperThan(bytes: Uint8Array, max: number): boolean {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < bytes.length; i++) {
    const c = bytes[i];
    if (inString) {
      if (c === 0x5c)
        i++; // a backslash escapes the next byte (\" or \\)
      else if (c === 0x22) inString = false;
    } else if (c === 0x22) inString = true;
    else if (c === 0x5b || c === 0x7b) {
      if (++depth > max) return true;
    } else if (c === 0x5d || c === 0x7d) depth--;
  }
  return false;
}

/**
 * The charset parameter of a Content-Type value, lower-cased and unquoted, or undefined when it
 * names none (RFC 9110 §8.3.2: parameter names are case-insensitive, values may be quoted).
 */
export function charsetOf(contentType: string | undefined): string | undefined {
  const m = /;\s*charset\s*=\s*(?:"([^"]*)"|([^;\s]*))/i.exec(contentType ?? '');
  if (!m) return undefined;
  return (m[1] ?? m[2] ?? '').toLowerCase();
}

/**
 * Why the raw query of `url` (path and query, still percent-encoded) cannot be read as UTF-8, or
 * undefined when it can: each name and value must percent-decode to valid UTF-8, as
 * `decodeURIComponent` requires (fastify's own parser would turn bad bytes into U+FFFD silently).
 * @returns `<name>: …`, or `querystring: …` when the name itself is bad.
 */
export function queryEncodingProblem(url: string): string | undefined {
  const at = url.indexOf('?');
  if (at < 0) return undefined;
  const TEXT = 'must be valid UTF-8, percent-encoded (RFC 3986)';
  for (const pair of url.slice(at + 1).split('&')) {
    if (pair === '') continue;
    const eq = pair.indexOf('=');
    const rawName = eq < 0 ? pair : pair.slice(0, eq);
    const rawValue = eq < 0 ? '' : pair.slice(eq + 1);
    let name: string;
    try {
      name = decodeURIComponent(rawName.replaceAll('+', ' '));
    } catch {
      return `querystring: a parameter name ${TEXT}`;
    }
    try {
      decodeURIComponent(rawValue.replaceAll('+', ' '));
    } catch {
      return `${name}: ${TEXT}`;
    }
  }
  return undefined;
}

/** A route's querystring schema as far as the policy reads it. */
interface QuerySchema {
  readonly additionalProperties?: unknown;
  readonly properties?: Readonly<Record<string, unknown>>;
}

/**
 * Closes the querystring of `route` (an onRoute hook): every route with a schema, except hidden
 * ones and wildcards (the static pages, whose query belongs to the page's script), gets
 * `additionalProperties: false` on its querystring schema, or an empty closed one when it has
 * none; the preValidation hook of {@link registerInputPolicy} then refuses any other parameter,
 * whatever validates the route (ajv, or zod in the handler), and /openapi.json says so.
 */
export function closeQuerystring(route: { url: string; schema?: unknown }): void {
  const schema = route.schema as (Record<string, unknown> & { hide?: boolean }) | undefined;
  if (!schema || schema.hide || route.url.includes('*')) return;
  const qs = (schema.querystring as Record<string, unknown> | undefined) ?? {
    type: 'object',
    properties: {},
  };
  route.schema = { ...schema, querystring: { ...qs, additionalProperties: false } };
}

/** The first query parameter of `query` that the route's closed `schema` does not declare. */
function unknownQueryParameter(query: unknown, schema: QuerySchema | undefined): string | undefined {
  if (schema?.additionalProperties !== false || typeof query !== 'object' || query === null) return undefined;
  const declared = schema.properties ?? {};
  return Object.keys(query).find((k) => !Object.hasOwn(declared, k));
}

/**
 * Registers the app-wide parts of the policy on `app` (the root instance, so every route and
 * plugin inherits them), before any route:
 * - the JSON parser: only `application/json`, with no charset or UTF-8 (else 415), valid UTF-8,
 *   nested at most {@link MAX_JSON_DEPTH} levels (else 400 before it is parsed). fastify's
 *   `text/plain` parser is removed, so every other media type is 415 (no route reads another).
 * - closed querystrings ({@link closeQuerystring});
 * - a preValidation hook: the raw query must be percent-encoded UTF-8, path parameters and every
 *   string of the body and query must be storable ({@link textProblem}), and no undeclared query
 *   parameter is accepted; each a 400 naming the parameter or field.
 * @throws nothing; errors of requests are thrown by the hooks (InvalidInputError → 400,
 *   UnsupportedMediaTypeError → 415).
 */
export function registerInputPolicy(app: FastifyInstance): void {
  const parseJson = app.getDefaultJsonParser('error', 'error');
  app.removeContentTypeParser(['application/json', 'text/plain']);
  app.addContentTypeParser('application/json', { parseAs: 'buffer' }, (req, body, done) => {
    const bytes = body as Buffer;
    const charset = charsetOf(req.headers['content-type']);
    if (charset !== undefined && charset !== 'utf-8' && charset !== 'utf8') {
      done(new UnsupportedMediaTypeError(`body: charset ${charset} is not supported; send UTF-8`), undefined);
      return;
    }
    if (!isUtf8(bytes)) {
      done(new InvalidInputError('INVALID_INPUT', 'body: must be valid UTF-8'), undefined);
      return;
    }
    if (nestsDeeperThan(bytes, MAX_JSON_DEPTH)) {
      done(
        new InvalidInputError('INVALID_INPUT', `body: nests deeper than ${MAX_JSON_DEPTH} levels`),
        undefined,
      );
      return;
    }
    parseJson(req, bytes.toString('utf8'), done);
  });
  app.addHook('onRoute', closeQuerystring);
  app.addHook('preValidation', async (req) => {
    const encoding = queryEncodingProblem(req.url);
    if (encoding) throw new InvalidInputError('INVALID_INPUT', encoding);
    for (const [name, value] of Object.entries((req.params as Record<string, unknown> | null) ?? {})) {
      const p = typeof value === 'string' ? textProblem(value) : undefined;
      if (p) throw new InvalidInputError('INVALID_INPUT', `${name}: ${p}`);
    }
    const problem = findTextProblem(req.body, 'body') ?? findTextProblem(req.query, 'querystring');
    if (problem) throw new InvalidInputError('INVALID_INPUT', problem);
    const querySchema = req.routeOptions.schema?.querystring as QuerySchema | undefined;
    const unknown = unknownQueryParameter(req.query, querySchema);
    if (unknown !== undefined)
      throw new InvalidInputError('INVALID_INPUT', `${unknown}: unknown query parameter`);
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
