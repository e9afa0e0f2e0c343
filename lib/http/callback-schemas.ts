/**
 * The JSON Schemas of the operator callbacks (schemas/callbacks/*.json): one per
 * callback and form for the request the platform sends, one per callback for the operator's ok
 * answer. Compiled once with ajv (JSON Schema draft-07). Used by the tests of every body the saga
 * builds, the operator sandbox's strict mode (exact bodies) and the wallet conformance kit (the
 * operator's ok answers).
 *
 * | callback | request schema | ok answer schema |
 * |---|---|---|
 * | Register Bet (both forms) | bet | bet |
 * | form A Register Win (also a zero-amount round close) | win-a | win-a |
 * | form B Register Earnings (also a zero-amount round close) | rewards-b | rewards-b |
 * | form A rollback | rollback-a | rollback |
 * | form B Rollback Bet | rollback-b | rollback |
 * | round end (round_close round-end) | round-end-a, round-end-b | round-end |
 * | Balance (both forms) | balance | balance |
 */
import { readdirSync, readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';

/** Where the schema files are. */
export const CALLBACK_SCHEMAS_DIR = resolve(import.meta.dirname, '../../schemas/callbacks');

/** The `$id` every schema file's own id is relative to. */
const BASE_ID = 'https://casino-platform.invalid/schemas/callbacks/';

export const REQUEST_SCHEMAS = [
  'bet',
  'win-a',
  'rewards-b',
  'rollback-a',
  'rollback-b',
  'round-end-a',
  'round-end-b',
  'balance',
] as const;
export type RequestSchema = (typeof REQUEST_SCHEMAS)[number];

export const RESPONSE_SCHEMAS = ['bet', 'win-a', 'rewards-b', 'rollback', 'round-end', 'balance'] as const;
export type ResponseSchema = (typeof RESPONSE_SCHEMAS)[number];

/** A callback as the schemas tell them apart: the body's `action` (or balance) and the form. */
export type SchemaAction = 'bet' | 'win' | 'rollback' | 'round_end' | 'balance';

/** The request schema of a callback of `action` in `form`. */
export function requestSchemaOf(action: SchemaAction, form: 'A' | 'B'): RequestSchema {
  const f = form === 'A' ? 'a' : 'b';
  switch (action) {
    case 'bet':
    case 'balance':
      return action;
    case 'win':
      return form === 'A' ? 'win-a' : 'rewards-b';
    case 'rollback':
      return `rollback-${f}`;
    case 'round_end':
      return `round-end-${f}`;
  }
}

/** The schema of the ok answer to a callback of `action` in `form`. */
export function responseSchemaOf(action: SchemaAction, form: 'A' | 'B'): ResponseSchema {
  if (action === 'win') return form === 'A' ? 'win-a' : 'rewards-b';
  if (action === 'round_end') return 'round-end';
  return action;
}

/** The validators of one schema directory. */
export interface CallbackSchemas {
  /**
   * What is wrong with `body` as a request of `name`: one line per problem (`/amount must match
   * pattern …`, `body has the unknown field linked_tx_id`); empty when it conforms.
   */
  request(name: RequestSchema, body: unknown): string[];
  /** The same for an ok answer of `name`. */
  response(name: ResponseSchema, body: unknown): string[];
}

/** One line per ajv error; an unknown field is named (ajv's own text does not say which). */
function problems(validate: ValidateFunction, body: unknown): string[] {
  if (validate(body)) return [];
  // An `if` error only says that a `then` failed, which is reported on its own.
  const errors = (validate.errors ?? []).filter((e) => e.keyword !== 'if');
  const lines = errors.map((e: ErrorObject) => {
    const at = e.instancePath === '' ? 'body' : e.instancePath;
    if (e.keyword === 'additionalProperties')
      return `${at} has the unknown field ${String(e.params.additionalProperty)}`;
    return `${at} ${e.message ?? e.keyword}`;
  });
  return [...new Set(lines)];
}

let loaded: CallbackSchemas | undefined;

/**
 * The compiled schemas of `dir` (default schemas/callbacks, compiled once per process).
 * @throws Error when a file is not valid JSON, a schema does not compile or one of
 *   REQUEST_SCHEMAS / RESPONSE_SCHEMAS has no file.
 */
export function callbackSchemas(dir: string = CALLBACK_SCHEMAS_DIR): CallbackSchemas {
  if (dir === CALLBACK_SCHEMAS_DIR && loaded) return loaded;
  const ajv = new Ajv({ allErrors: true, strict: true });
  for (const file of readdirSync(dir).filter((f) => f.endsWith('.json')))
    ajv.addSchema(JSON.parse(readFileSync(resolve(dir, file), 'utf8')) as object);
  const compile = (file: string): ValidateFunction => {
    const v = ajv.getSchema(`${BASE_ID}${file}`);
    if (!v) throw new Error(`no callback schema ${file} in ${dir}`);
    return v;
  };
  const requests = new Map(REQUEST_SCHEMAS.map((n) => [n, compile(`${n}.request.json`)]));
  const responses = new Map(RESPONSE_SCHEMAS.map((n) => [n, compile(`${n}.response.json`)]));
  const schemas: CallbackSchemas = {
    request: (name, body) => problems(requests.get(name) as ValidateFunction, body),
    response: (name, body) => problems(responses.get(name) as ValidateFunction, body),
  };
  if (dir === CALLBACK_SCHEMAS_DIR) loaded = schemas;
  return schemas;
}
